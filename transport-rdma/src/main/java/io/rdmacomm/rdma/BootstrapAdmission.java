package io.rdmacomm.rdma;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The checks of a {@link BootstrapServer} on a client before it opens a provider channel for it: the client
 * authenticates where the server has a shared secret ({@link MutualAuthentication} in AUTH frames, the challenge and
 * the proof), and its HELLO must ask for what this server runs (provider or wire family, flags, oneSided). A client
 * that fails is told why in a REFUSE or AUTH frame before the check throws.
 */
final class BootstrapAdmission {
    private final Endpoint endpoint;
    private final RdmaProvider provider;
    /** The server's shared secret, or null when it authenticates nobody. */
    private final SharedSecret secret;

    BootstrapAdmission(Endpoint endpoint, RdmaProvider provider, SharedSecret secret) {
        this.endpoint = endpoint;
        this.provider = provider;
        this.secret = secret;
    }

    /**
     * Starts authenticating {@code p} if this server has a secret: sends the challenge and returns true (the proof
     * is read next); false if there is nothing to authenticate. Refuses a client whose offer does not match.
     */
    boolean challenge(PendingPeer p, BootstrapHello hello) throws IOException {
        boolean offered = (hello.flags() & BootstrapFrame.FLAG_AUTHENTICATION) != 0;
        if (secret != null && !offered) {
            BootstrapFrame.writeTo(p.socket, new BootstrapRefuse("this server requires authentication",
                    BootstrapRefuse.AUTH_REQUIRED).encode());
            throw AuthenticationException.notOfferedBy(p.peer);
        }
        if (secret == null && offered) {
            BootstrapFrame.writeTo(p.socket, new BootstrapRefuse("this server has no shared secret",
                    BootstrapRefuse.NO_SECRET).encode());
            throw AuthenticationException.offeredWithoutSecret(p.peer);
        }
        if (secret == null) {
            return false;
        }
        p.hello = hello;
        p.auth = new MutualAuthentication.Server(secret, p.peer);
        p.frame = new BootstrapFrame();
        if (!BootstrapFrame.writeTo(p.socket, BootstrapFrame.frame(BootstrapFrame.AUTH,
                ByteBuffer.wrap(p.auth.challenge())))) {
            throw new HandshakeException("bootstrap with " + p.peer + ": the peer does not read its challenge");
        }
        return true;
    }

    /** The client's proof arrived: answered either way; throws if it was wrong (the client has been told). */
    void checkProof(PendingPeer p) throws IOException {
        if (p.frame.type() != BootstrapFrame.AUTH || p.frame.body().remaining() != MutualAuthentication.PROOF_BYTES) {
            throw new HandshakeException("bootstrap from " + p.peer + ": expected an AUTH proof of "
                    + MutualAuthentication.PROOF_BYTES + " bytes, got type " + p.frame.type() + " with "
                    + p.frame.body().remaining() + " bytes");
        }
        byte[] proof = new byte[MutualAuthentication.PROOF_BYTES];
        p.frame.body().get(proof);
        BootstrapFrame.writeTo(p.socket, BootstrapFrame.frame(BootstrapFrame.AUTH,
                ByteBuffer.wrap(p.auth.answer(proof))));
        p.auth.checkAccepted();
    }

    /** Why {@code hello} is refused (provider, flags or oneSided do not match this server), or null. */
    String refusal(BootstrapHello hello) {
        // same name, or (peers that send it) the same wire family: ucx-jucx and ucx-ffm speak one UCX wire format
        if (!hello.provider().equals(provider.name()) && !provider.wireFamily().equals(hello.family())) {
            return "provider " + hello.provider() + " asked for, this server runs " + provider.name() + " ("
                    + (hello.family() == null ? "the client names no wire family, so only " + provider.name()
                            + " would do" : "wire family " + hello.family() + ", this server's is "
                            + provider.wireFamily() + ": they cannot talk to each other") + ")";
        }
        if ((hello.flags() & ~BootstrapFrame.FLAG_AUTHENTICATION) != 0) {
            return "flags 0x" + Integer.toHexString(hello.flags()) + " not supported";
        }
        // UCX cannot connect a context with RMA to one without (libucp 1.13 aborts in its wireup on shared memory);
        // verbs ignores the option
        boolean trusted = RdmaCommunicator.trustsPeers(endpoint);
        if (hello.oneSidedTrusted() != trusted && provider.oneSidedModesMustMatch()) {
            return "the client's endpoint says oneSided=" + (hello.oneSidedTrusted() ? "trusted" : "checked")
                    + ", this server's oneSided=" + (trusted ? "trusted" : "checked")
                    + ": both ends must say the same";
        }
        return null;
    }
}

package io.rdmacomm.api.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response authentication with a {@link SharedSecret}, independent of the transport: three
 * fixed-size messages that either side's handshake carries.
 *
 * <pre>
 * 1. server → client  challenge  32 bytes: fresh random nonce Ns
 * 2. client → server  proof      64 bytes: fresh random nonce Nc | HMAC-SHA-256(K, "rdmacomm-auth-1 client" | Ns | Nc)
 * 3. server → client  answer     33 bytes: status (0 accepted, 1 refused)
 *                                           | HMAC-SHA-256(K, "rdmacomm-auth-1 server" | Nc | Ns) (zeros if refused)
 * </pre>
 *
 * <p>The server proves itself only after the client has, so a peer without the secret learns nothing but a random
 * nonce and a refusal. Fresh nonces both ways make a recorded exchange worthless against a later one; the labels
 * keep one side's proof from being reflected as the other's; MACs are compared in constant time
 * ({@link MessageDigest#isEqual}). It authenticates the peers, not the bytes that follow: use TLS where the
 * stream itself must be protected.
 *
 * <p><b>For a transport's handshake</b> (the hook the {@code rdma://} bootstrap calls): a server runs
 * {@link #serve(SharedSecret, Exchange, String)} and a client {@link #prove(SharedSecret, Exchange, String)} over
 * the bootstrap connection, each within the handshake's own timeout, after both sides agreed that they use a secret
 * (a server with a secret must refuse a peer that offers none, and a client with a secret a server that has none:
 * say so in the handshake's status, as {@code tcp://} does with its flags and statuses). A transport whose
 * handshake runs on a selector uses {@link Server} and {@link Client} directly, message by message.
 */
public final class MutualAuthentication {
    public static final int NONCE_BYTES = 32;
    public static final int MAC_BYTES = 32;
    public static final int CHALLENGE_BYTES = NONCE_BYTES;
    public static final int PROOF_BYTES = NONCE_BYTES + MAC_BYTES;
    public static final int ANSWER_BYTES = 1 + MAC_BYTES;
    private static final byte ACCEPTED = 0;
    private static final byte REFUSED = 1;
    private static final byte[] CLIENT_LABEL = "rdmacomm-auth-1 client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_LABEL = "rdmacomm-auth-1 server".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private MutualAuthentication() {
    }

    /** A blocking byte exchange with the peer: the transport's handshake connection, with its timeouts. */
    public interface Exchange {
        /** Sends all of {@code bytes}. */
        void send(byte[] bytes) throws IOException;

        /** Receives exactly {@code n} bytes, or throws (end of stream, timeout). */
        byte[] receive(int n) throws IOException;
    }

    /**
     * The server's part over a blocking exchange.
     *
     * @throws AuthenticationException if the peer's proof is wrong (the peer has been told)
     */
    public static void serve(SharedSecret secret, Exchange peer, String peerName) throws IOException {
        Server server = new Server(secret, peerName);
        peer.send(server.challenge());
        byte[] answer = server.answer(peer.receive(PROOF_BYTES));
        peer.send(answer);
        server.checkAccepted();
    }

    /**
     * The client's part over a blocking exchange.
     *
     * @throws AuthenticationException if the server refused our proof or could not prove itself
     */
    public static void prove(SharedSecret secret, Exchange server, String serverName) throws IOException {
        Client client = new Client(secret, serverName);
        server.send(client.proof(server.receive(CHALLENGE_BYTES)));
        client.check(server.receive(ANSWER_BYTES));
    }

    /** The server's side, one message at a time; one instance per connection. */
    public static final class Server {
        private final byte[] key;
        private final String peer;
        private final byte[] nonce = nonce();
        private boolean accepted;

        public Server(SharedSecret secret, String peer) {
            this.key = secret.key();
            this.peer = peer;
        }

        /** Message 1: a fresh nonce. */
        public byte[] challenge() {
            return nonce.clone();
        }

        /** Message 3 for the client's message 2; see {@link #checkAccepted()} for the verdict. */
        public byte[] answer(byte[] proof) {
            if (proof.length != PROOF_BYTES) {
                throw new IllegalArgumentException("a proof has " + PROOF_BYTES + " bytes, got " + proof.length);
            }
            byte[] theirNonce = Arrays.copyOfRange(proof, 0, NONCE_BYTES);
            byte[] expected = mac(key, CLIENT_LABEL, nonce, theirNonce);
            accepted = MessageDigest.isEqual(expected, Arrays.copyOfRange(proof, NONCE_BYTES, PROOF_BYTES));
            byte[] answer = new byte[ANSWER_BYTES];
            answer[0] = accepted ? ACCEPTED : REFUSED;
            if (accepted) {
                System.arraycopy(mac(key, SERVER_LABEL, theirNonce, nonce), 0, answer, 1, MAC_BYTES);
            }
            return answer;
        }

        /** @throws AuthenticationException if the last {@link #answer} refused the peer */
        public void checkAccepted() throws AuthenticationException {
            if (!accepted) {
                throw new AuthenticationException("peer " + peer + " failed authentication: its proof does not"
                        + " match this server's shared secret");
            }
        }
    }

    /** The client's side, one message at a time; one instance per connection. */
    public static final class Client {
        private final byte[] key;
        private final String server;
        private final byte[] nonce = nonce();
        private byte[] challenge;

        public Client(SharedSecret secret, String server) {
            this.key = secret.key();
            this.server = server;
        }

        /** Message 2 for the server's message 1. */
        public byte[] proof(byte[] challenge) {
            if (challenge.length != CHALLENGE_BYTES) {
                throw new IllegalArgumentException("a challenge has " + CHALLENGE_BYTES + " bytes, got "
                        + challenge.length);
            }
            this.challenge = challenge.clone();
            byte[] proof = Arrays.copyOf(nonce, PROOF_BYTES);
            System.arraycopy(mac(key, CLIENT_LABEL, challenge, nonce), 0, proof, NONCE_BYTES, MAC_BYTES);
            return proof;
        }

        /**
         * Checks message 3.
         *
         * @throws AuthenticationException if the server refused us or did not prove it knows the secret
         */
        public void check(byte[] answer) throws AuthenticationException {
            if (challenge == null || answer.length != ANSWER_BYTES) {
                throw new IllegalStateException("check() needs the " + ANSWER_BYTES + "-byte answer to proof()");
            }
            if (answer[0] == REFUSED) {
                throw new AuthenticationException(server + " refused our authentication: our shared secret is not"
                        + " the server's");
            }
            boolean proven = answer[0] == ACCEPTED && MessageDigest.isEqual(mac(key, SERVER_LABEL, nonce, challenge),
                    Arrays.copyOfRange(answer, 1, ANSWER_BYTES));
            if (!proven) {
                throw new AuthenticationException(server + " did not prove that it knows the shared secret;"
                        + " not connecting to it");
            }
        }
    }

    private static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    private static byte[] mac(byte[] key, byte[] label, byte[] first, byte[] second) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(label);
            mac.update(first);
            mac.update(second);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has HmacSHA256", e);
        }
    }
}

package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import java.io.IOException;
import java.util.List;

/**
 * The DiSNI calls of one connection's data path: its queue pair, completion queue and protection domain. This is
 * the seam unit tests replace: the work requests handed to {@link #postSend} and the stateful calls it returns are
 * DiSNI's own types, so a test sees exactly what would reach {@code ibv_post_send}.
 */
interface Verbs {

    /** A stateful send call for this connection's queue pair, built once and re-executed with modifications. */
    SVCPostSend postSend(List<IbvSendWR> wrs) throws IOException;

    /** A stateful receive call for this connection's queue pair. */
    SVCPostRecv postRecv(List<IbvRecvWR> wrs) throws IOException;

    /**
     * The native address of a direct buffer. DiSNI reads it through {@code sun.nio.ch.DirectBuffer}, hence the
     * {@code --add-exports} flag the probe asks for.
     */
    long address(java.nio.ByteBuffer direct);

    /** Registers memory in this connection's protection domain ({@code IbvMr.IBV_ACCESS_*} flags). */
    IbvMr register(long address, int length, int access) throws IOException;

    void deregister(IbvMr mr) throws IOException;

    /** A stateful poll of this connection's completion queue into {@code wcs}. */
    SVCPollCq pollCq(IbvWC[] wcs) throws IOException;

    /**
     * Waits up to {@code timeoutMillis} for the completion channel to signal, acknowledges and re-arms it; returns
     * whether it signalled. The caller polls the queue afterwards either way.
     */
    boolean awaitCompletions(int timeoutMillis) throws IOException;

    /** Starts the rdma-cm disconnect; the queue pair enters the error state and flushes what is posted. */
    void disconnect();

    /** Destroys queue pair, completion queue, completion channel, protection domain and the cm id. */
    void destroy();

    /**
     * rdma-cm through DiSNI: event channels and the creation of a connection's verbs resources once its route is
     * resolved. Replaced in tests of connection setup.
     */
    interface Cm {
        RdmaEventChannel openEventChannel() throws IOException;

        Verbs createQueuePair(RdmaCmId id, Settings settings) throws IOException;
    }
}

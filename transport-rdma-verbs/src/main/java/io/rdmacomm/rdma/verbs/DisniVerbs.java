package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCRegMr;
import com.ibm.disni.verbs.SVCReqNotify;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Verbs} on DiSNI's low-level verbs classes. DiSNI's endpoint groups are not used: their connect and accept
 * wait without a deadline for rdma-cm events that never come on errors, and they start unnamed threads; the
 * provider drives rdma-cm itself instead ({@link CmLoop}). Not unit-tested: every method is a native call.
 */
final class DisniVerbs implements Verbs {
    private static final Logger LOG = LoggerFactory.getLogger(DisniVerbs.class);

    /** The real {@link Verbs.Cm}. */
    static final Verbs.Cm CM = new Verbs.Cm() {
        @Override
        public RdmaEventChannel openEventChannel() throws IOException {
            RdmaEventChannel ch;
            try {
                ch = RdmaEventChannel.createEventChannel();
            } catch (IOException e) {
                throw new CommunicatorException("rdma-cm cannot be used here (" + e.getMessage().trim() + "): no RDMA"
                        + " device, or /dev/infiniband/rdma_cm is missing or not accessible", e);
            }
            if (ch == null) {
                throw new CommunicatorException("rdma_create_event_channel failed: no RDMA device usable by rdma-cm");
            }
            return ch;
        }

        @Override
        public Verbs createQueuePair(RdmaCmId id, Settings settings) throws IOException {
            return DisniVerbs.create(id, settings);
        }
    };

    private final RdmaCmId id;
    private final IbvPd pd;
    private final IbvCompChannel completionChannel;
    private final IbvCQ cq;
    private final SVCReqNotify rearm;

    private DisniVerbs(RdmaCmId id, IbvPd pd, IbvCompChannel completionChannel, IbvCQ cq, SVCReqNotify rearm) {
        this.id = id;
        this.pd = pd;
        this.completionChannel = completionChannel;
        this.cq = cq;
        this.rearm = rearm;
    }

    /** Allocates PD, completion channel, CQ and an RC queue pair for a cm id whose route is resolved. */
    static DisniVerbs create(RdmaCmId id, Settings s) throws IOException {
        IbvContext context = id.getVerbs();
        if (context == null) {
            throw new CommunicatorException("rdma-cm bound the connection to no RDMA device");
        }
        IbvPd pd = null;
        IbvCompChannel cc = null;
        IbvCQ cq = null;
        try {
            pd = context.allocPd();
            cc = context.createCompChannel();
            cq = context.createCQ(cc, s.completionQueueSize(), 0);
            if (pd == null || cc == null || cq == null) {
                throw new CommunicatorException("allocating verbs resources failed (pd " + pd + ", channel " + cc
                        + ", cq " + cq + ")");
            }
            IbvQPInitAttr attr = new IbvQPInitAttr();
            attr.cap().setMax_send_wr(s.maxSendWr());
            attr.cap().setMax_recv_wr(s.recvSlots());
            attr.cap().setMax_send_sge(1);
            attr.cap().setMax_recv_sge(1);
            attr.setQp_type(IbvQP.IBV_QPT_RC);
            attr.setSend_cq(cq);
            attr.setRecv_cq(cq);
            if (id.createQP(pd, attr) == null) {
                throw new CommunicatorException("rdma_create_qp failed");
            }
            SVCReqNotify rearm = cq.reqNotification(false);
            rearm.execute();
            return new DisniVerbs(id, pd, cc, cq, rearm);
        } catch (IOException | RuntimeException e) {
            destroyQuietly(cq, cc, pd);
            throw e;
        }
    }

    @Override
    public SVCPostSend postSend(List<IbvSendWR> wrs) throws IOException {
        return id.getQp().postSend(wrs, null);
    }

    @Override
    public SVCPostRecv postRecv(List<IbvRecvWR> wrs) throws IOException {
        return id.getQp().postRecv(wrs, null);
    }

    @Override
    public long address(java.nio.ByteBuffer direct) {
        return com.ibm.disni.util.MemoryUtils.getAddress(direct);
    }

    @Override
    public IbvMr register(long address, int length, int access) throws IOException {
        SVCRegMr call = pd.regMr(address, length, access);
        try {
            IbvMr mr = call.execute().getMr();
            if (mr == null) {
                throw new CommunicatorException("ibv_reg_mr of " + length + " bytes failed");
            }
            return mr;
        } finally {
            call.free();
        }
    }

    @Override
    public void deregister(IbvMr mr) throws IOException {
        mr.deregMr().execute().free();
    }

    @Override
    public SVCPollCq pollCq(IbvWC[] wcs) throws IOException {
        return cq.poll(wcs, wcs.length);
    }

    @Override
    public boolean awaitCompletions(int timeoutMillis) throws IOException {
        if (!completionChannel.getCqEvent(cq, timeoutMillis)) {
            return false;
        }
        cq.ackEvents(1);
        rearm.execute();
        return true;
    }

    @Override
    public void disconnect() {
        try {
            id.disconnect();
        } catch (IOException | RuntimeException e) {
            LOG.debug("rdma_disconnect: {}", e.toString());
        }
    }

    @Override
    public void destroy() {
        try {
            id.destroyQP();
        } catch (IOException | RuntimeException e) {
            LOG.debug("destroying the queue pair: {}", e.toString());
        }
        rearm.free();
        destroyQuietly(cq, completionChannel, pd);
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            LOG.debug("destroying the cm id: {}", e.toString());
        }
    }

    private static void destroyQuietly(IbvCQ cq, IbvCompChannel cc, IbvPd pd) {
        // A completion channel cannot be destroyed while a CQ still uses it, so the CQ goes first.
        try {
            if (cq != null) {
                cq.destroyCQ();
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("destroying the completion queue: {}", e.toString());
        }
        try {
            if (cc != null) {
                cc.destroyCompChannel();
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("destroying the completion channel: {}", e.toString());
        }
        try {
            if (pd != null) {
                pd.deallocPd();
            }
        } catch (Exception e) {
            LOG.debug("deallocating the protection domain: {}", e.toString());
        }
    }
}

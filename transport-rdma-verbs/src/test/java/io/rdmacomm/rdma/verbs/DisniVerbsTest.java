package io.rdmacomm.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCRegMr;
import com.ibm.disni.verbs.SVCReqNotify;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.ArgumentCaptor;
import org.mockito.InOrder;

/** The real {@link Verbs} against mocks of DiSNI's classes: resources created, configured and released in order. */
@Timeout(30)
class DisniVerbsTest {
    private static final Settings S = new Settings(16, 8, 4, 256);

    private RdmaCmId id;
    private IbvContext context;
    private IbvPd pd;
    private IbvCompChannel cc;
    private IbvCQ cq;
    private IbvQP qp;
    private SVCReqNotify rearm;

    @BeforeEach
    void mocks() throws IOException {
        id = mock(RdmaCmId.class);
        context = mock(IbvContext.class);
        pd = mock(IbvPd.class);
        cc = mock(IbvCompChannel.class);
        cq = mock(IbvCQ.class);
        qp = mock(IbvQP.class);
        rearm = mock(SVCReqNotify.class);
        when(id.getVerbs()).thenReturn(context);
        when(context.allocPd()).thenReturn(pd);
        when(context.createCompChannel()).thenReturn(cc);
        when(context.createCQ(eq(cc), anyInt(), eq(0))).thenReturn(cq);
        when(id.createQP(eq(pd), any())).thenReturn(qp);
        when(id.getQp()).thenReturn(qp);
        when(cq.reqNotification(false)).thenReturn(rearm);
    }

    @Test
    void createsAnRcQueuePairSizedBySettingsOnOneCompletionQueue() throws IOException {
        DisniVerbs v = DisniVerbs.create(id, S);
        verify(context).createCQ(cc, S.completionQueueSize(), 0);
        ArgumentCaptor<IbvQPInitAttr> attr = ArgumentCaptor.forClass(IbvQPInitAttr.class);
        verify(id).createQP(eq(pd), attr.capture());
        IbvQPInitAttr a = attr.getValue();
        assertEquals(IbvQP.IBV_QPT_RC, a.getQp_type());
        assertEquals(S.maxSendWr(), a.cap().getMax_send_wr());
        assertEquals(2 * 8 + 4, a.cap().getMax_send_wr(), "a notified write posts two work requests");
        assertEquals(S.recvSlots(), a.cap().getMax_recv_wr());
        assertEquals(1, a.cap().getMax_send_sge());
        assertEquals(1, a.cap().getMax_recv_sge());
        assertSame(cq, a.getSend_cq());
        assertSame(cq, a.getRecv_cq());
        verify(rearm).execute();
        SVCPostSend post = mock(SVCPostSend.class);
        List<IbvSendWR> wrs = List.of(new IbvSendWR());
        when(qp.postSend(wrs, null)).thenReturn(post);
        assertSame(post, v.postSend(wrs));
    }

    @Test
    void aFailedQueuePairReleasesWhatWasAllocated() throws Exception {
        when(id.createQP(eq(pd), any())).thenReturn(null);
        assertThrows(CommunicatorException.class, () -> DisniVerbs.create(id, S));
        InOrder order = inOrder(cq, cc, pd);
        order.verify(cq).destroyCQ();
        order.verify(cc).destroyCompChannel();
        order.verify(pd).deallocPd();
        verify(id, never()).destroyId();
    }

    @Test
    void destroyReleasesQueuePairBeforeCqAndCqBeforeItsChannelAndTheIdLast() throws Exception {
        DisniVerbs v = DisniVerbs.create(id, S);
        when(cq.destroyCQ()).thenThrow(new IOException("busy"));
        v.destroy();
        InOrder order = inOrder(id, cq, cc, pd);
        order.verify(id).destroyQP();
        order.verify(cq).destroyCQ();
        order.verify(cc).destroyCompChannel();
        order.verify(pd).deallocPd();
        order.verify(id).destroyId();
        verify(rearm).free();
    }

    @Test
    void completionWaitAcknowledgesAndRearmsOnlyWhenSignalled() throws IOException {
        DisniVerbs v = DisniVerbs.create(id, S);
        when(cc.getCqEvent(cq, 50)).thenReturn(false, true);
        assertFalse(v.awaitCompletions(50));
        verify(cq, never()).ackEvents(anyInt());
        assertTrue(v.awaitCompletions(50));
        verify(cq).ackEvents(1);
        verify(rearm, times(2)).execute();
    }

    @Test
    void registrationRunsTheStatefulCallOnceAndFreesIt() throws IOException {
        DisniVerbs v = DisniVerbs.create(id, S);
        SVCRegMr reg = mock(SVCRegMr.class);
        IbvMr mr = mock(IbvMr.class);
        when(pd.regMr(0x1000L, 4096, IbvMr.IBV_ACCESS_LOCAL_WRITE)).thenReturn(reg);
        when(reg.execute()).thenReturn(reg);
        when(reg.getMr()).thenReturn(mr);
        assertSame(mr, v.register(0x1000L, 4096, IbvMr.IBV_ACCESS_LOCAL_WRITE));
        verify(reg).free();
        when(reg.getMr()).thenReturn(null);
        assertThrows(CommunicatorException.class, () -> v.register(0x1000L, 4096, IbvMr.IBV_ACCESS_LOCAL_WRITE));
        verify(reg, times(2)).free();
    }

    @Test
    void aDisconnectErrorIsNotThrown() throws IOException {
        DisniVerbs v = DisniVerbs.create(id, S);
        when(id.disconnect()).thenThrow(new IOException("Trying to disconnect with closed ID"));
        v.disconnect();
        verify(id).disconnect();
    }
}

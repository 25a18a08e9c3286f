package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rdma-cm event channel and the thread that reads it ({@code rdmacomm-rdma-verbs-cm}), dispatching each event
 * to the listener registered for its cm id. Every event is read with a short timeout, so the thread notices a
 * release at once and never waits on rdma-cm without a bound. Reference-counted: a listener's accepted connections
 * keep its event channel (rdma-cm gives them the listener's) after the listener itself closed.
 */
final class CmLoop {
    private static final Logger LOG = LoggerFactory.getLogger(CmLoop.class);
    static final int POLL_MILLIS = 50;

    /** Receives the events of one cm id, on the loop's thread. Must not block. */
    @FunctionalInterface
    interface Listener {
        /** {@code connId} is the event's connection id: for a connect request, the new connection's id. */
        void onEvent(EventType type, RdmaCmId connId);
    }

    private final RdmaEventChannel channel;
    private final Map<RdmaCmId, Listener> listeners = new ConcurrentHashMap<>();
    private final Runnable tick;
    private final Thread thread;
    private int references = 1;
    private volatile boolean stopped;

    private CmLoop(RdmaEventChannel channel, Runnable tick) {
        this.channel = channel;
        this.tick = tick;
        this.thread = new Thread(this::run, "rdmacomm-rdma-verbs-cm");
        this.thread.setDaemon(true);
    }

    /** Opens an event channel and starts reading it; {@code tick} runs on the loop's thread after every poll. */
    static CmLoop start(Verbs.Cm cm, Runnable tick) throws IOException {
        CmLoop loop = new CmLoop(cm.openEventChannel(), tick);
        loop.thread.start();
        return loop;
    }

    RdmaCmId createId() throws IOException {
        RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
        if (id == null) {
            throw new IOException("rdma_create_id failed");
        }
        return id;
    }

    void listen(RdmaCmId id, Listener listener) {
        listeners.put(id, listener);
    }

    void forget(RdmaCmId id) {
        listeners.remove(id);
    }

    synchronized void retain() {
        references++;
    }

    /**
     * Drops one reference; the last one stops the thread (waiting for it unless called on it) and destroys the
     * event channel. Every cm id of the channel must be destroyed by then.
     */
    void release() {
        synchronized (this) {
            if (--references > 0) {
                return;
            }
        }
        stopped = true;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("the rdma-cm thread did not stop within 2 s");
            }
        }
    }

    private void run() {
        try {
            while (!stopped) {
                RdmaCmEvent event;
                try {
                    event = channel.getCmEvent(POLL_MILLIS);
                } catch (IOException | RuntimeException e) {
                    LOG.warn("reading rdma-cm events failed; connection events of this channel are lost: {}",
                            e.toString());
                    return;
                }
                if (event != null) {
                    dispatch(event);
                }
                tick.run();
            }
        } finally {
            try {
                channel.destroyEventChannel();
            } catch (IOException | RuntimeException e) {
                LOG.debug("destroying the rdma-cm event channel: {}", e.toString());
            }
        }
    }

    private void dispatch(RdmaCmEvent event) {
        EventType[] types = EventType.values();
        int code = event.getEvent();
        if (code < 0 || code >= types.length) {
            LOG.debug("ignoring unknown rdma-cm event {}", code);
            return;
        }
        EventType type = types[code];
        RdmaCmId target = type == EventType.RDMA_CM_EVENT_CONNECT_REQUEST ? event.getListenIdPriv()
                : event.getConnIdPriv();
        Listener l = target == null ? null : listeners.get(target);
        try {
            if (l != null) {
                l.onEvent(type, event.getConnIdPriv());
            } else {
                LOG.debug("rdma-cm event {} for no known id", type);
            }
        } catch (RuntimeException e) {
            LOG.warn("handling rdma-cm event {} failed", type, e);
        }
        try {
            event.ackEvent();
        } catch (IOException | RuntimeException e) {
            LOG.debug("acknowledging rdma-cm event {}: {}", type, e.toString());
        }
    }
}

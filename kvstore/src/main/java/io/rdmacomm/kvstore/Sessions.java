package io.rdmacomm.kvstore;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's sessions. A session is opened over gRPC (id and secret token), then bound to one data connection
 * by the attach message, then given the client's buffer over gRPC; it ends with its data connection.
 */
final class Sessions {
    private static final Logger LOG = LoggerFactory.getLogger(Sessions.class);
    private static final SecureRandom TOKENS = new SecureRandom();

    private final int max;
    private final ConcurrentHashMap<Long, Session> byId = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private boolean closed;

    /** One client's session. */
    static final class Session {
        final long id;
        final String name;
        private final long token;
        private Communicator data;
        private volatile RegionDescriptor buffer;
        /** The buffer's size, or -1 before RegisterBuffer. */
        private volatile long bufferBytes = -1;
        private boolean ended;

        private Session(long id, long token, String name) {
            this.id = id;
            this.token = token;
            this.name = name;
        }

        long token() {
            return token;
        }

        /** The client's registered buffer, or null before RegisterBuffer or with inline values (size only). */
        RegionDescriptor buffer() {
            return buffer;
        }

        /** The client's buffer's size, or -1 before RegisterBuffer. */
        long bufferBytes() {
            return bufferBytes;
        }

        void buffer(RegionDescriptor d) {
            buffer = d;
            bufferBytes = d.length();
        }

        /** With inline values: the buffer's size alone, nothing registered. */
        void bufferBytes(long bytes) {
            buffer = null;
            bufferBytes = bytes;
        }

        synchronized boolean attached() {
            return data != null;
        }

        /** Binds the data connection; false if the session already has one or has ended. */
        private synchronized boolean attach(Communicator c) {
            if (data != null || ended) {
                return false;
            }
            data = c;
            return true;
        }

        /** Ends the session: its data connection closes, which ends the thread serving it. */
        private void end() {
            Communicator c;
            synchronized (this) {
                ended = true;
                c = data;
            }
            if (c != null) {
                try {
                    c.close();
                } catch (IOException e) {
                    LOG.debug("closing the data connection of session {}", id, e);
                }
            }
        }

        @Override
        public String toString() {
            return "session " + id + (name.isEmpty() ? "" : " (" + name + ")");
        }
    }

    Sessions(int max) {
        this.max = max;
    }

    Session open(String name) throws KvException {
        long id = ids.incrementAndGet();
        Session s = new Session(id, TOKENS.nextLong(), name);
        synchronized (this) {
            if (closed) {
                throw new KvException(KvException.Code.BUSY, "the server is stopping");
            }
            if (byId.size() >= max) {
                throw new KvException(KvException.Code.BUSY, "the server serves its maximum of " + max
                        + " sessions (--max-sessions)");
            }
            byId.put(id, s);
            notifyAll();
        }
        return s;
    }

    Session find(long id, long token) throws KvException {
        Session s = byId.get(id);
        if (s == null || s.token != token) {
            throw new KvException(KvException.Code.NO_SESSION, "no session " + id
                    + " with that token (never opened, ended, or its data connection failed)");
        }
        return s;
    }

    /** Binds {@code c} to the session as its data connection. */
    Session attach(long id, long token, Communicator c) throws KvException {
        Session s = find(id, token);
        if (!s.attach(c)) {
            throw new KvException(KvException.Code.NO_SESSION, s + " already has a data connection");
        }
        return s;
    }

    /** Ends a session unless already ended; {@code failure} says whether its data connection failed. */
    void end(Session s, boolean failure) {
        if (byId.remove(s.id, s)) {
            if (failure) {
                failed.incrementAndGet();
            }
            s.end();
            synchronized (this) {
                notifyAll();
            }
        }
    }

    /** Ends a session that never attached a data connection. */
    void endIfUnattached(Session s) {
        if (!s.attached()) {
            LOG.info("{} ended: no data connection attached in time", s);
            end(s, false);
        }
    }

    int size() {
        return byId.size();
    }

    /** Waits until {@code expected} sessions are open or {@code timeout} passes; true if they are. */
    synchronized boolean awaitSize(int expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (long left = timeout.toNanos(); byId.size() != expected; left = deadline - System.nanoTime()) {
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    long failed() {
        return failed.get();
    }

    /** Refuses new sessions and ends every open one. */
    void close() {
        List<Session> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(byId.values());
        }
        for (Session s : all) {
            end(s, false);
        }
    }
}

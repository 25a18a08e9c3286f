package io.rdmacomm.gvirtus;

import java.util.concurrent.ConcurrentMap;

/**
 * A routine a {@link GVirtuSBackend} runs by name, as a GVirtuS plugin's handler does: it decodes its arguments
 * from the request's input and returns its exit code and marshalled output.
 *
 * <p>Found either by {@link java.util.ServiceLoader} (list the class, which needs a public no-argument
 * constructor, in {@code META-INF/services/io.rdmacomm.gvirtus.GVirtuSRoutine}) or registered directly with
 * {@link GVirtuSBackend.Builder#register(GVirtuSRoutine)}.
 *
 * <p>One instance serves every session, possibly at the same time from several threads: keep per-session state
 * in {@link Context#attributes()}. An exception, or a {@code null} result, is answered with
 * {@link GVirtuSResult#EXIT_ROUTINE_FAILED} and logged; the session goes on. A routine should return when its
 * thread is interrupted: that is how {@link GVirtuSBackend#close()} stops it.
 */
public interface GVirtuSRoutine {

    /** The routine name a frontend sends, e.g. {@code cudaMalloc}; non-empty, without NUL. */
    String name();

    /**
     * Runs the routine.
     *
     * @param input the request's input, positioned at its start
     * @param context the session the request came from
     * @return the exit code and output; the backend measures and fills in the elapsed time
     */
    GVirtuSResult call(GVirtuSBuffer input, Context context) throws Exception;

    /** The session a request came from. */
    interface Context {
        /** The peer, for messages and logs. */
        String peerName();

        /** A number for this session, unique within its backend. */
        long sessionId();

        /** State that lives as long as this session (one frontend connection), shared by its routines. */
        ConcurrentMap<String, Object> attributes();
    }
}

package io.rdmacomm.session.routine;

/**
 * A named routine a server can run for its clients. Plugins implement it and list the class in
 * {@code META-INF/services/io.rdmacomm.session.routine.Routine} on the server's class path.
 * Implementations must be thread-safe: several sessions may call one routine at once. A routine runs on a thread
 * of its own, which is interrupted when the server's routine timeout passes; a routine that loops should check
 * {@link Thread#interrupted()} and give up, since its result is no longer wanted. Its cost should be bounded by
 * its input, which the server caps.
 */
public interface Routine {

    /** The name clients call it by: lower-case letters, digits, '-', '_' and '.', at most 64 characters. */
    String name();

    /** One line for listings. */
    String description();

    /**
     * Runs the routine.
     *
     * @throws RoutineException if the input is not acceptable; the message goes back to the client
     */
    byte[] run(byte[] input) throws RoutineException;
}

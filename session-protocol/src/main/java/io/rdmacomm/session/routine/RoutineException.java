package io.rdmacomm.session.routine;

/** A routine refused its input; the message is sent back to the calling client. */
public final class RoutineException extends Exception {
    private static final long serialVersionUID = 1L;

    public RoutineException(String message) {
        super(message);
    }
}

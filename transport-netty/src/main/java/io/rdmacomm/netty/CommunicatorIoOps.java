package io.rdmacomm.netty;

import io.netty.channel.IoOps;

/** What a {@link CommunicatorIoHandle} asks its {@link CommunicatorIoHandler} for through {@code IoRegistration.submit}. */
public enum CommunicatorIoOps implements IoOps {
    /**
     * Arm readiness: the handle's communicator's {@code notifyReadable} listener queues the handle on the event loop,
     * which then calls {@code handle(registration, READY)} once. One submit, at most one call.
     */
    READ,
    /** Queue the handle on the event loop now (from any thread): for events a thread of its own found (accept). */
    NOTIFY
}

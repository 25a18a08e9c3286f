package io.rdmacomm.netty;

import io.netty.channel.IoEvent;

/** The one event a {@link CommunicatorIoHandler} delivers: the handle was queued (readable, or notified). */
public enum CommunicatorIoEvent implements IoEvent {
    READY
}

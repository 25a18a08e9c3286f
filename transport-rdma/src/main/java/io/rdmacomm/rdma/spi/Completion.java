package io.rdmacomm.rdma.spi;

import java.io.IOException;

/**
 * The outcome of one asynchronous channel operation; exactly one method is called once, possibly on the thread
 * that started the operation (when it completed at once) or on the progress thread.
 */
public interface Completion {

    void completed();

    void failed(IOException cause);
}

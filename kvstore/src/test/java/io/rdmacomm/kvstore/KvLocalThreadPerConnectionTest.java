package io.rdmacomm.kvstore;

/** {@link KvLocalTest} with a thread per data connection ({@code --loops 0}) instead of an event loop. */
class KvLocalThreadPerConnectionTest extends KvLocalTest {
    @Override
    int loops() {
        return 0;
    }
}

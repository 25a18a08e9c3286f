package io.rdmacomm.tcp;

/** {@link TlsTest}'s failures and successes on the JDK's TLS engine ({@code tlsEngine=jdk}). */
class TlsJdkEngineTest extends TlsTest {
    @Override
    String engine() {
        return "jdk";
    }
}

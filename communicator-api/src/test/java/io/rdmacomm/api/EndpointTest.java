package io.rdmacomm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class EndpointTest {

    @Test
    void parsesHostPortAndTypedOptions() {
        Endpoint e = Endpoint.parse("rdma://10.0.0.2:9999?provider=ucx&connectTimeout=5s&ringSize=2m");
        assertEquals("rdma", e.scheme());
        assertEquals("10.0.0.2", e.host());
        assertEquals(9999, e.port());
        assertEquals("ucx", e.string(EndpointOption.PROVIDER));
        assertEquals(Duration.ofSeconds(5), e.duration(EndpointOption.CONNECT_TIMEOUT));
        assertEquals(2L << 20, e.size(EndpointOption.RING_SIZE));
        assertTrue(e.isSet(EndpointOption.RING_SIZE));
        assertFalse(e.isSet(EndpointOption.READ_TIMEOUT));
    }

    @Test
    void defaultsApplyWhenOptionsAreAbsent() {
        Endpoint e = Endpoint.parse("tcp://127.0.0.1:0");
        assertEquals(Duration.ofSeconds(10), e.duration(EndpointOption.CONNECT_TIMEOUT));
        assertEquals(Duration.ZERO, e.duration(EndpointOption.READ_TIMEOUT));
        assertEquals(64 * 1024, e.intSize(EndpointOption.SEND_BUFFER));
        assertEquals(0, e.port());
    }

    @Test
    void aSchemeMayHaveADefaultOfItsOwn() {
        assertEquals(Duration.ZERO, Endpoint.parse("tcp://127.0.0.1:0").duration(EndpointOption.BUSY_POLL));
        assertEquals(Duration.ofNanos(50_000),
                Endpoint.parse("rdma://127.0.0.1:0").duration(EndpointOption.BUSY_POLL));
        assertEquals(Duration.ZERO, Endpoint.parse("rdma://127.0.0.1:0?busyPoll=0").duration(EndpointOption.BUSY_POLL));
        assertEquals("50us", EndpointOption.BUSY_POLL.defaultText("rdma"));
        assertEquals("0", EndpointOption.BUSY_POLL.defaultText("tcp"));
        assertFalse(Endpoint.parse("rdma://127.0.0.1:0").isSet(EndpointOption.BUSY_POLL));
    }

    @Test
    void ipv6InBrackets() {
        Endpoint e = Endpoint.parse("tcp://[::1]:7000");
        assertEquals("::1", e.host());
        assertEquals(7000, e.port());
        assertEquals("tcp://[::1]:7000", e.toString());
    }

    @Test
    void localTakesANameAndNoPort() {
        Endpoint e = Endpoint.parse("local://test-server");
        assertEquals("test-server", e.host());
        assertEquals(-1, e.port());
        assertEquals("local://test-server", e.toString());
    }

    @Test
    void toStringRoundTrips() {
        String uri = "rdma://127.0.0.1:1234?connectTimeout=500ms&provider=verbs";
        Endpoint e = Endpoint.parse(uri);
        assertEquals(e, Endpoint.parse(e.toString()));
        assertEquals(e.hashCode(), Endpoint.parse(e.toString()).hashCode());
    }

    @Test
    void withPortKeepsOptions() {
        Endpoint e = Endpoint.parse("tcp://127.0.0.1:0?readTimeout=2s").withPort(4321);
        assertEquals(4321, e.port());
        assertEquals(Duration.ofSeconds(2), e.duration(EndpointOption.READ_TIMEOUT));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.0.0.1:9999|expected scheme://host:port",
        "tcp://127.0.0.1|missing port",
        "tcp://:9999|missing host",
        "tcp://127.0.0.1:70000|bad host or port",
        "tcp://127.0.0.1:abc|bad host or port",
        "tcp://127.0.0.1:-1|bad host or port",
        "tcp://127.0.0.1:|bad host or port",
        "tcp://[::1|without a closing ']'",
        "tcp://[::1]x|only ':port' may follow ']'",
        "tcp://[example.com]:1|brackets are for IPv6 literals",
        "tcp://::1|missing port",
        "tcp://[::1]|missing port",
        "tcp://127.0.0.1:1?bogus=1|unknown option 'bogus'",
        "tcp://127.0.0.1:1?provider=ucx|option 'provider' does not apply to tcp://",
        "tcp://127.0.0.1:1?sendBuffer=12q|bad size '12q'",
        "tcp://127.0.0.1:1?sendBuffer=0|must be positive",
        "tcp://127.0.0.1:1?readTimeout=5|bad duration '5'",
        "tcp://127.0.0.1:1?readTimeout=1s&readTimeout=2s|given twice",
        "tcp://127.0.0.1:1?readTimeout|not name=value",
        "rdma://127.0.0.1:1?provider=psm|unknown provider 'psm'",
        "tcp://127.0.0.1:1?wire=gvirtus|unknown wire 'gvirtus': expected one of [framed, raw]",
        "rdma://127.0.0.1:1?wire=raw|option 'wire' does not apply to rdma://",
        "rdma://127.0.0.1:1?oneSided=yes|unknown oneSided 'yes': expected one of [checked, trusted]",
        "tcp://127.0.0.1:1?oneSided=trusted|option 'oneSided' does not apply to tcp://",
        "local://bad/name|local:// takes a name",
    })
    void badInputNamesTheBadPart(String uri, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Endpoint.parse(uri));
        assertTrue(e.getMessage().contains(expected), () -> "message '" + e.getMessage() + "' lacks '"
                + expected + "'");
        assertTrue(e.getMessage().contains(uri), () -> "message '" + e.getMessage() + "' does not name " + uri);
    }

    @Test
    void optionNamesAreCaseInsensitive() {
        assertEquals(Duration.ofMillis(250),
                Endpoint.parse("tcp://127.0.0.1:1?READTIMEOUT=250ms").duration(EndpointOption.READ_TIMEOUT));
    }
}

package io.rdmacomm.servercomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * servercomm's command line in this JVM, up to the point where it would serve: {@code --protocol} and the options
 * that belong to one protocol only. Serving itself is tested across JVMs in system-tests.
 */
@Timeout(30)
class ServerMainTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return ServerMain.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--protocol smoke|--protocol must be session or gvirtus, got 'smoke'",
        "--protocol gvirtus --region-size 1k|--region-size applies to --protocol session only",
        "--protocol gvirtus --request-timeout 1s|--request-timeout applies to --protocol session only",
        "--protocol gvirtus --max-group-size 2|--max-group-size applies to --protocol session only",
        "--protocol gvirtus --group-timeout 1s|--group-timeout applies to --protocol session only",
        "--max-input 1m|--max-input applies to --protocol gvirtus only",
        "--protocol gvirtus --max-input 3g|--max-input: maxInputBytes must be between 0 and",
        "--protocol gvirtus --max-sessions 0|--max-sessions must be at least 1, got 0",
        "--protocol gvirtus --endpoint tcp://127.0.0.1:0?wire=gvirtus|unknown wire 'gvirtus': expected one of"
                + " [framed, raw]",
    })
    void badCommandLinesAreUsageErrorsNamingTheOption(String args, String expected) {
        assertEquals(2, run(args.split(" ")), err::toString);
        String e = err.toString();
        assertTrue(e.startsWith("servercomm: ") && e.contains(expected), e);
        assertEquals(1, e.lines().count(), e);
        assertEquals("", out.toString());
    }

    @Test
    void aGVirtuSBackendThatCannotListenIsOneLineAndExitOne() throws Exception {
        try (ServerSocketChannel taken = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            int port = ((InetSocketAddress) taken.getLocalAddress()).getPort();
            assertEquals(1, run("--protocol", "gvirtus", "--endpoint", "tcp://127.0.0.1:" + port + "?wire=raw"));
            String e = err.toString();
            assertTrue(e.startsWith("servercomm: cannot listen on tcp://127.0.0.1:" + port), e);
            assertEquals(1, e.lines().count(), e);
            assertEquals("", out.toString(), "no listening line for a server that does not listen");
        }
    }

    @Test
    void helpDescribesBothProtocols() {
        assertEquals(0, run("--help"));
        String help = out.toString().replaceAll("\\s+", " ");
        assertTrue(help.contains("--protocol=PROTOCOL"), help);
        assertTrue(help.contains("session (clientcomm's exercises) or gvirtus (a GVirtuS backend)"), help);
        assertTrue(help.contains("--max-input=SIZE"), help);
        assertTrue(help.contains("cudaGetDeviceCount"), help);
    }
}

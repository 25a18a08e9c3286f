package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class GVirtuSConfigTest {

    @Test
    void loadsGVirtuSsOwnPropertiesFileAsTheRawTcpWire(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("properties.json");
        // etc/properties.json of gvirtus/GVirtuS as shipped
        Files.writeString(file, """
                {
                  "communicator": [
                    {
                      "endpoint": {
                        "suite": "tcp/ip",
                        "protocol": "tcp",
                        "server_address": "127.0.0.1",
                        "port": "9999"
                      },
                      "plugins": [
                        "cudart",
                        "cublas",
                        "curand",
                        "cudnn"
                      ]
                    }
                  ],
                  "secure_application": false
                }
                """);
        List<Endpoint> endpoints = GVirtuSConfig.load(file);
        assertEquals(List.of(Endpoint.parse("tcp://127.0.0.1:9999?wire=raw")), endpoints);
        assertEquals("raw", endpoints.get(0).string(EndpointOption.WIRE));
    }

    @Test
    void rdmacommsOwnProtocolsMapToRdmaBetweenRdmacommPeers() throws Exception {
        List<Endpoint> endpoints = GVirtuSConfig.parse("""
                {"communicator": [
                  {"endpoint": {"suite": "infiniband-rdma", "protocol": "rdma", "server_address": "::1", "port": 8888}},
                  {"endpoint": {"protocol": "verbs", "server_address": "10.1.1.1", "port": "7777"}},
                  {"endpoint": {"protocol": "UCX", "server_address": "gpu-host", "port": "7778"}}
                ]}
                """, "p.json");
        assertEquals(Endpoint.parse("rdma://[::1]:8888"), endpoints.get(0));
        assertEquals(Endpoint.parse("rdma://10.1.1.1:7777?provider=verbs"), endpoints.get(1));
        assertEquals(Endpoint.parse("rdma://gpu-host:7778?provider=ucx"), endpoints.get(2));
    }

    @Test
    void theIbProtocolIsRefusedAsNotWireCompatible() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GVirtuSConfig.parse("""
                {"communicator":[{"endpoint":{"suite":"infiniband-rdma","protocol":"ib",
                                              "server_address":"10.0.0.2","port":"9999"}}]}
                """, "p.json"));
        assertTrue(e.getMessage().contains("p.json: communicator[0].endpoint.protocol 'ib'"), e.getMessage());
        assertTrue(e.getMessage().contains("not wire-compatible"), e.getMessage());
        assertTrue(e.getMessage().contains("rdma:// between rdmacomm peers"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{}|p.json: expected a non-empty array \"communicator\"",
        "{\"communicator\":[]}|expected a non-empty array \"communicator\"",
        "{\"communicator\":{}}|expected a non-empty array \"communicator\"",
        "{\"communicator\":[{}]}|communicator[0].endpoint is missing or not an object",
        "{\"communicator\":[{\"endpoint\":7}]}|communicator[0].endpoint is missing or not an object",
        "{\"communicator\":[{\"endpoint\":{\"server_address\":\"h\",\"port\":\"1\"}}]}|communicator[0].endpoint.protocol is missing",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"smoke\",\"server_address\":\"h\",\"port\":\"1\"}}]}|communicator[0].endpoint.protocol 'smoke' is not supported",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"oldtcp\",\"server_address\":\"h\",\"port\":\"1\"}}]}|communicator[0].endpoint.protocol 'oldtcp' is not supported",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"port\":\"1\"}}]}|communicator[0].endpoint.server_address is missing",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"\",\"port\":\"1\"}}]}|communicator[0].endpoint.server_address is empty",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"[example.com]\",\"port\":\"1\"}}]}|communicator[0].endpoint.server_address '[example.com]': bad endpoint",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"h\"}}]}|communicator[0].endpoint.port is missing",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"h\",\"port\":\"70000\"}}]}|communicator[0].endpoint.port '70000' is not a port number from 1 to 65535",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"h\",\"port\":\"0\"}}]}|communicator[0].endpoint.port '0'",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"h\",\"port\":\"99x\"}}]}|communicator[0].endpoint.port '99x'",
        "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"h\",\"port\":[1]}}]}|communicator[0].endpoint.port is missing or not a string or number",
        "{\"communicator\":[{\"endpoint\":{\"suite\":\"infiniband-rdma\",\"protocol\":\"tcp\",\"server_address\":\"h\",\"port\":\"1\"}}]}|communicator[0].endpoint.suite 'infiniband-rdma' does not go with protocol 'tcp'; expected 'tcp/ip'",
        "{\"communicator\":[{\"endpoint\":{\"suite\":\"udp/ip\",\"protocol\":\"rdma\",\"server_address\":\"h\",\"port\":\"1\"}}]}|communicator[0].endpoint.suite 'udp/ip' does not go with protocol 'rdma'; expected 'infiniband-rdma'",
    })
    void badFilesAreRejectedNamingTheField(String json, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GVirtuSConfig.parse(json, "p.json"));
        assertTrue(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' lacks '" + expected + "'");
        assertTrue(e.getMessage().startsWith("p.json: "), e.getMessage());
    }

    @Test
    void theSecondEntryIsNamedWhenItIsTheBadOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GVirtuSConfig.parse("""
                {"communicator":[{"endpoint":{"protocol":"tcp","server_address":"127.0.0.1","port":"1"}},
                                 {"endpoint":{"protocol":"tcp","server_address":"h","port":"-4"}}]}
                """, "p.json"));
        assertTrue(e.getMessage().contains("communicator[1].endpoint.port"), e.getMessage());
    }

    @Test
    void notJsonIsAnIOExceptionNamingTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("properties.json");
        Files.writeString(file, "{not json");
        IOException e = assertThrows(IOException.class, () -> GVirtuSConfig.load(file));
        assertTrue(e.getMessage().startsWith(file + ": not valid JSON"), e.getMessage());
    }
}

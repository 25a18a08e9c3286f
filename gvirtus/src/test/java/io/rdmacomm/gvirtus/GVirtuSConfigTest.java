package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class GVirtuSConfigTest {

    @Test
    void loadsEndpointsFromAGVirtuSPropertiesFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("properties.json");
        Files.writeString(file, """
                {
                  "communicator": [
                    { "endpoint": { "suite": "tcp/ip", "protocol": "tcp",
                                    "server_address": "127.0.0.1", "port": "9999" },
                      "plugins": ["cudart"] },
                    { "endpoint": { "suite": "infiniband-rdma", "protocol": "ib",
                                    "server_address": "::1", "port": 8888 } },
                    { "endpoint": { "suite": "infiniband-rdma", "protocol": "verbs",
                                    "server_address": "10.1.1.1", "port": "7777" } }
                  ],
                  "secure_application": false
                }
                """);
        List<Endpoint> endpoints = GVirtuSConfig.load(file);
        assertEquals(Endpoint.parse("tcp://127.0.0.1:9999"), endpoints.get(0));
        assertEquals(Endpoint.parse("rdma://[::1]:8888"), endpoints.get(1));
        assertEquals("verbs", endpoints.get(2).string(EndpointOption.PROVIDER));
    }

    @Test
    void errorsNameTheEntryAndField() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GVirtuSConfig.parse("""
                {"communicator":[{"endpoint":{"protocol":"tcp","server_address":"127.0.0.1","port":"1"}},
                                 {"endpoint":{"protocol":"smoke","server_address":"h","port":"1"}}]}
                """, "p.json"));
        assertTrue(e.getMessage().contains("communicator[1].endpoint.protocol"), e.getMessage());
        IllegalArgumentException port = assertThrows(IllegalArgumentException.class, () -> GVirtuSConfig.parse(
                "{\"communicator\":[{\"endpoint\":{\"protocol\":\"tcp\",\"server_address\":\"h\"}}]}", "p.json"));
        assertTrue(port.getMessage().contains("communicator[0].endpoint.port"), port.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GVirtuSConfig.parse("{}", "p.json"));
        assertThrows(java.io.IOException.class, () -> GVirtuSConfig.parse("{not json", "p.json"));
    }
}

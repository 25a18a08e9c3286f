package io.rdmacomm.gvirtus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads the communicator endpoints of a GVirtuS {@code properties.json}:
 *
 * <pre>{@code
 * { "communicator": [ { "endpoint": { "suite": "tcp/ip", "protocol": "tcp",
 *                                      "server_address": "127.0.0.1", "port": "9999" } } ] }
 * }</pre>
 *
 * <p>{@code protocol} {@code tcp} maps to {@code tcp://ADDRESS:PORT?wire=raw}, the plain byte stream a GVirtuS
 * {@code TcpCommunicator} speaks, so the same file serves a real GVirtuS peer and ours. {@code ib} is refused:
 * GVirtuS's {@code ib} communicator sends two-sided messages, a wire that {@code rdma://} does not speak.
 * {@code rdma}, {@code ucx} and {@code verbs} are this project's own values, for {@code rdma://} between rdmacomm
 * peers (the last two choose the provider); {@code http}, {@code oldtcp} and {@code ws}, which GVirtuS lists but
 * ships no communicator for, are refused.
 *
 * <p>{@code suite} may be left out; when given it must be GVirtuS's {@code tcp/ip} (for {@code tcp}) or
 * {@code infiniband-rdma} (for the {@code rdma://} values). {@code port} is 1 to 65535, as a JSON string (as GVirtuS
 * writes it) or number. {@code server_address} is a dotted IPv4 address (all GVirtuS accepts), a host name or an
 * IPv6 literal. Every error names the file, the entry and the field.
 */
public final class GVirtuSConfig {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TCP_SUITE = "tcp/ip";
    private static final String RDMA_SUITE = "infiniband-rdma";

    private GVirtuSConfig() {
    }

    /** The endpoints of the file, in order. */
    public static List<Endpoint> load(Path file) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new IOException(file + ": not valid JSON: " + e.getMessage(), e);
        }
        return parse(root, file.toString());
    }

    /** The endpoints of a {@code properties.json} given as text; {@code source} names it in errors. */
    public static List<Endpoint> parse(String json, String source) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw new IOException(source + ": not valid JSON: " + e.getMessage(), e);
        }
        return parse(root, source);
    }

    private static List<Endpoint> parse(JsonNode root, String source) {
        JsonNode list = root == null ? null : root.get("communicator");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw new IllegalArgumentException(source + ": expected a non-empty array \"communicator\"");
        }
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            String where = source + ": communicator[" + i + "].endpoint";
            JsonNode ep = list.get(i).get("endpoint");
            if (ep == null || !ep.isObject()) {
                throw new IllegalArgumentException(where + " is missing or not an object");
            }
            endpoints.add(endpoint(ep, where));
        }
        return endpoints;
    }

    private static Endpoint endpoint(JsonNode ep, String where) {
        String protocol = text(ep, "protocol", where).toLowerCase(Locale.ROOT);
        String scheme;
        String options = "";
        switch (protocol) {
            case "tcp" -> {
                scheme = "tcp://";
                options = "?wire=raw";
            }
            case "rdma" -> scheme = "rdma://";
            case "ucx", "verbs" -> {
                scheme = "rdma://";
                options = "?provider=" + protocol;
            }
            case "ib" -> throw new IllegalArgumentException(where + ".protocol 'ib': GVirtuS's ib communicator is"
                    + " not wire-compatible with rdmacomm (it sends two-sided messages; rdma:// is a byte stream over"
                    + " one-sided writes); use protocol tcp to talk to GVirtuS, or rdma (ucx, verbs) for rdma://"
                    + " between rdmacomm peers");
            default -> throw new IllegalArgumentException(where + ".protocol '" + protocol + "' is not supported;"
                    + " expected tcp (GVirtuS's TCP wire), or rdma, ucx or verbs (rdma:// between rdmacomm peers)");
        }
        if (ep.has("suite")) {
            String suite = text(ep, "suite", where);
            String expected = scheme.equals("tcp://") ? TCP_SUITE : RDMA_SUITE;
            if (!suite.equals(expected)) {
                throw new IllegalArgumentException(where + ".suite '" + suite + "' does not go with protocol '"
                        + protocol + "'; expected '" + expected + "' (or leave suite out)");
            }
        }
        String address = text(ep, "server_address", where);
        if (address.isEmpty()) {
            throw new IllegalArgumentException(where + ".server_address is empty");
        }
        String port = text(ep, "port", where);
        if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            throw new IllegalArgumentException(where + ".port '" + port + "' is not a port number from 1 to 65535");
        }
        String host = address.contains(":") && !address.startsWith("[") ? "[" + address + "]" : address;
        try {
            return Endpoint.parse(scheme + host + ":" + port + options);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ".server_address '" + address + "': " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode node, String field, String where) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull() || !(v.isTextual() || v.isNumber())) {
            throw new IllegalArgumentException(where + "." + field + " is missing or not a string or number");
        }
        return v.asText().trim();
    }
}

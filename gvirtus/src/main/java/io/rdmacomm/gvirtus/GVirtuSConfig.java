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
 * Reads the communicator endpoints of a GVirtuS {@code properties.json}, so a GVirtuS deployment can point at
 * these communicators unchanged:
 *
 * <pre>{@code
 * { "communicator": [ { "endpoint": { "suite": "tcp/ip", "protocol": "tcp",
 *                                      "server_address": "127.0.0.1", "port": "9999" } } ] }
 * }</pre>
 *
 * <p>{@code protocol} {@code tcp} (or {@code oldtcp}) maps to {@code tcp://}; {@code ib}, {@code rdma},
 * {@code ucx} and {@code verbs} map to {@code rdma://} (with the matching provider for the last two).
 * {@code port} may be a number or a string.
 */
public final class GVirtuSConfig {
    private static final ObjectMapper JSON = new ObjectMapper();

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
                throw new IllegalArgumentException(where + " is missing");
            }
            String protocol = text(ep, "protocol", where).toLowerCase(Locale.ROOT);
            String address = text(ep, "server_address", where);
            String port = text(ep, "port", where);
            String uri = switch (protocol) {
                case "tcp", "oldtcp" -> "tcp://";
                case "ib", "rdma" -> "rdma://";
                case "ucx", "verbs" -> "rdma://";
                default -> throw new IllegalArgumentException(where + ".protocol '" + protocol
                        + "' is not supported; expected tcp, oldtcp, ib, rdma, ucx or verbs");
            };
            String host = address.contains(":") && !address.startsWith("[") ? "[" + address + "]" : address;
            uri += host + ":" + port;
            if (protocol.equals("ucx") || protocol.equals("verbs")) {
                uri += "?provider=" + protocol;
            }
            try {
                endpoints.add(Endpoint.parse(uri));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
        }
        return endpoints;
    }

    private static String text(JsonNode node, String field, String where) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull() || !(v.isTextual() || v.isNumber())) {
            throw new IllegalArgumentException(where + "." + field + " is missing or not a string or number");
        }
        return v.asText().trim();
    }
}

package io.rdmacomm.api;

/**
 * The host and port of an endpoint's authority: {@code host:port}, or {@code [v6-literal]:port} for IPv6. A bare
 * IPv6 literal (several colons, no brackets) is a host without a port.
 */
record HostPort(String host, int port) {
    static final int NO_PORT = -1;

    /**
     * Parses an authority.
     *
     * @throws IllegalArgumentException saying what is wrong with it
     */
    static HostPort parse(String authority) {
        String host;
        String portText = null;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("'[' without a closing ']'");
            }
            host = authority.substring(1, close);
            String rest = authority.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw new IllegalArgumentException("only ':port' may follow ']', got '" + rest + "'");
                }
                portText = rest.substring(1);
            }
            if (host.indexOf(':') < 0) {
                throw new IllegalArgumentException("brackets are for IPv6 literals, got '" + host + "'");
            }
        } else {
            int colon = authority.indexOf(':');
            if (colon >= 0 && authority.indexOf(':', colon + 1) < 0) {
                host = authority.substring(0, colon);
                portText = authority.substring(colon + 1);
            } else {
                host = authority;
            }
            if (host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
                throw new IllegalArgumentException("stray bracket in host '" + host + "'");
            }
        }
        return new HostPort(host, portText == null ? NO_PORT : parsePort(portText));
    }

    private static int parsePort(String text) {
        if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("port '" + text + "' is not a number from 0 to 65535");
        }
        int port = Integer.parseInt(text);
        if (port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range 0 to 65535");
        }
        return port;
    }

    boolean hasPort() {
        return port != NO_PORT;
    }

    /** The authority form: brackets around IPv6 literals. */
    static String format(String host, int port) {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return port == NO_PORT ? h : h + ":" + port;
    }

    @Override
    public String toString() {
        return format(host, port);
    }
}

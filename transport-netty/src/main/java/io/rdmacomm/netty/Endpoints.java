package io.rdmacomm.netty;

import io.rdmacomm.api.Endpoint;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.regex.Pattern;

/** Maps Netty's addresses onto endpoint URIs and back. */
final class Endpoints {

    /** An IPv4 literal, or an IPv6 one (with a colon). */
    private static final Pattern LITERAL = Pattern.compile("[0-9.]+|.*:.*");

    private Endpoints() {
    }

    /** The URI for a bind or connect: a {@link CommunicatorAddress}'s own, or scheme://host:port?options. */
    static String uri(SocketAddress address, String scheme, String options) {
        if (address instanceof CommunicatorAddress) {
            return ((CommunicatorAddress) address).uri();
        }
        if (!(address instanceof InetSocketAddress)) {
            throw new IllegalArgumentException("unsupported address type " + address.getClass().getName()
                    + ": use a CommunicatorAddress (an endpoint URI) or an InetSocketAddress");
        }
        InetSocketAddress inet = (InetSocketAddress) address;
        InetAddress ip = inet.getAddress();
        String host = ip != null ? ip.getHostAddress() : inet.getHostString();
        if (host.indexOf(':') >= 0) {
            int zone = host.indexOf('%');
            host = "[" + (zone >= 0 ? host.substring(0, zone) : host) + "]";
        }
        String uri = scheme + "://" + host + ":" + inet.getPort();
        return options == null || options.isEmpty() ? uri : uri + "?" + options;
    }

    /** The address Netty reports for an endpoint: an InetSocketAddress where it has host and port, else the URI. */
    static SocketAddress address(Endpoint endpoint) {
        if (endpoint.port() < 0) {
            return new CommunicatorAddress(endpoint.toString());
        }
        return inet(endpoint.host(), endpoint.port());
    }

    /** A peer name as communicators give it ("127.0.0.1:53122", "[::1]:53122") as an address; null if none. */
    static SocketAddress peer(String peerName) {
        int colon = peerName == null ? -1 : peerName.lastIndexOf(':');
        if (colon <= 0 || colon == peerName.length() - 1) {
            return null;
        }
        String host = peerName.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return inet(host, Integer.parseInt(peerName.substring(colon + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static InetSocketAddress inet(String host, int port) {
        if (!LITERAL.matcher(host).matches()) {
            // a name: no lookup on an event loop
            return InetSocketAddress.createUnresolved(host, port);
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port); // a literal: parsed, not looked up
        } catch (Exception e) {
            return InetSocketAddress.createUnresolved(host, port);
        }
    }
}

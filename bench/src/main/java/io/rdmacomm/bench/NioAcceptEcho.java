package io.rdmacomm.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * The raw Java NIO baseline of the connection rows (bench/clients --transport raw): one thread and one selector
 * accept every connection and echo whatever arrives on it, with {@code TCP_NODELAY} and one direct buffer shared by
 * all connections, so an idle connection costs the server its socket and nothing else. No handshake, no framing, no
 * session: the least a Java server does to take many connections and answer each.
 *
 * <p>Usage: {@code NioAcceptEcho HOST PORT [BACKLOG]}; prints {@code listening raw://HOST:PORT} once accepting, and
 * runs until killed. A connection that fails is closed; the others are served on; a failed accept (out of
 * descriptors) is retried after 10 ms.
 */
public final class NioAcceptEcho {
    private static final int BUFFER = 64 << 10;

    private NioAcceptEcho() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2 || args.length > 3) {
            throw new IllegalArgumentException("usage: NioAcceptEcho HOST PORT [BACKLOG]");
        }
        ServerSocketChannel listener = ServerSocketChannel.open();
        listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        listener.bind(new InetSocketAddress(args[0], Integer.parseInt(args[1])),
                args.length == 3 ? Integer.parseInt(args[2]) : 4096);
        listener.configureBlocking(false);
        Selector selector = Selector.open();
        SelectionKey acceptKey = listener.register(selector, SelectionKey.OP_ACCEPT);
        System.out.println("listening raw://" + args[0] + ":" + ((InetSocketAddress) listener.getLocalAddress()).getPort());
        System.out.flush();
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
        long retryAt = 0;
        for (;;) {
            if (retryAt != 0 && System.nanoTime() - retryAt >= 0) {
                acceptKey.interestOps(SelectionKey.OP_ACCEPT);
                retryAt = 0;
            }
            selector.select(retryAt == 0 ? 0 : 10);
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext();) {
                SelectionKey k = it.next();
                it.remove();
                if (k == acceptKey) {
                    try {
                        for (SocketChannel c; (c = listener.accept()) != null;) {
                            c.configureBlocking(false);
                            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                            c.register(selector, SelectionKey.OP_READ);
                        }
                    } catch (IOException e) {
                        acceptKey.interestOps(0);
                        retryAt = System.nanoTime() + 10_000_000L;
                    }
                } else if (k.isValid() && k.isReadable()) {
                    echo((SocketChannel) k.channel(), k, buffer);
                }
            }
        }
    }

    /** Echoes what arrived; the echo of a few KiB fits the socket's send buffer, else the rest waits in a loop. */
    private static void echo(SocketChannel c, SelectionKey k, ByteBuffer buffer) {
        try {
            buffer.clear();
            int n = c.read(buffer);
            if (n < 0) {
                k.cancel();
                c.close();
                return;
            }
            buffer.flip();
            while (buffer.hasRemaining()) {
                c.write(buffer);
            }
        } catch (IOException e) {
            k.cancel();
            try {
                c.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}

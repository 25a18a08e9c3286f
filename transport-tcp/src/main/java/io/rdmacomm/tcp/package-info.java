/**
 * The {@code tcp://} transport: blocking NIO socket channels with {@code TCP_NODELAY}, a magic-and-version
 * handshake on every connection, and a stream carried in typed, length-prefixed frames so that emulated
 * one-sided remote-memory operations ({@code put}/{@code get} against registered buffers, served by a
 * per-connection progress thread started on first use) share the connection with the byte stream. Only
 * {@link io.rdmacomm.tcp.TcpCommunicatorProvider} and {@link io.rdmacomm.tcp.TcpCommunicator} are public.
 *
 * <p>Inside, bottom up: {@code SocketIo} is a connection's socket and how threads wait on it (blocking, or
 * selectors with busy polling and timeouts); {@code Dialer}, {@code TcpServer} and {@code Handshake} set
 * connections up; {@code Wire} is the frame layout with its flyweight; {@code FrameReader} and {@code FrameWriter}
 * are the framed receive side and the coalescing send side; {@code RemoteMemory} and {@code OneSided} emulate
 * remote memory on those frames; {@code TcpConnection} ties one connection together (who reads the socket, close);
 * {@code TcpCommunicator} is the facade on {@link io.rdmacomm.api.support.AbstractCommunicator}.
 */
package io.rdmacomm.tcp;

/**
 * The {@code tcp://} transport: NIO socket channels with {@code TCP_NODELAY}, a magic-and-version
 * handshake on every connection, and a stream carried in typed, length-prefixed frames so that emulated
 * one-sided remote-memory operations ({@code put}/{@code get} against registered buffers, served by a
 * per-connection progress thread started on first use) share the connection with the byte stream. Only
 * {@link io.rdmacomm.tcp.TcpCommunicatorProvider} and {@link io.rdmacomm.tcp.TcpCommunicator} are public.
 *
 * <p>Inside, bottom up: {@code SocketIo} is a connection's socket, its only descriptor, and how threads wait on it
 * (blocking, or parked until {@code Readiness} finds it ready, with busy polling and timeouts) and end it;
 * {@code Dialer}, {@code BoundListener}, {@code TcpServer} and {@code Handshake} set connections up; {@code Wire} is
 * the frame layout with its flyweight; {@code FrameReader} and {@code FrameWriter} are the framed receive side and the
 * coalescing send side; {@code RemoteMemory} and {@code OneSided} emulate remote memory on those frames;
 * {@code TcpConnection} ties one connection together (who reads the socket, heartbeats and silent peers through
 * {@link io.rdmacomm.api.support.Liveness}, close, {@code available}/{@code notifyReadable}); {@code Readiness} is the
 * process's one selector thread on which non-blocking connections wait, for their reads, writes and
 * {@code notifyReadable}; {@code BufferPool} lends the full-size receive and send buffers to connections whose frames
 * do not fit their small resident ones; {@code TcpCommunicator} is the facade on
 * {@link io.rdmacomm.api.support.AbstractCommunicator}.
 *
 * <p>{@code ?tls=true} puts TLS under all of it: {@code TlsConfig} reads the {@code tls*} options once (key material
 * through {@code TlsKeys}), {@code TlsSession} is one connection's {@code SSLEngine} and its buffers; {@code Dialer}
 * and {@code Handshake.Accepting} run its handshake before ours, and {@code SocketIo} reads and writes through it.
 *
 * <p>{@code ?wire=raw} selects the other wire: {@code RawTcpCommunicator} over {@code RawServer} and
 * {@code RawConnection}, a plain byte stream with no handshake and no frames (what a GVirtuS {@code TcpCommunicator}
 * speaks), sharing {@code SocketIo}, {@code BoundListener} and {@code Dialer}'s connect but none of the framing; it
 * cannot tell readiness ({@code notifyReadable} returns false there).
 */
package io.rdmacomm.tcp;

/**
 * The {@code tcp://} transport: blocking NIO socket channels with {@code TCP_NODELAY}, a magic-and-version
 * handshake on every connection, and a stream carried in typed, length-prefixed frames so that emulated
 * one-sided remote-memory operations ({@code put}/{@code get} against registered buffers, served by a
 * per-connection progress thread started on first use) share the connection with the byte stream. Only
 * {@link io.rdmacomm.tcp.TcpCommunicatorProvider} and {@link io.rdmacomm.tcp.TcpCommunicator} are public.
 */
package io.rdmacomm.tcp;

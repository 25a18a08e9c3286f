/**
 * The {@code local://name} transport: in-process connections made of two bounded byte pipes, found through a
 * JVM-wide registry of served names, with the contract's blocking, timeout, close and handshake semantics and
 * one-sided remote memory served in the caller's thread. For tests of code that embeds a communicator, and as
 * the reference transport the contract kit is checked against.
 */
package io.rdmacomm.local;

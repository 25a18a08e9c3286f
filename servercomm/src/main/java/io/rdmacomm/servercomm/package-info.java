/**
 * The {@code servercomm} binary: {@link io.rdmacomm.servercomm.ServerMain} parses the command line and runs a
 * {@link io.rdmacomm.session.SessionServer}, which accepts peers on one endpoint and serves each in its own thread
 * through the session protocol (package {@code io.rdmacomm.session}, docs/protocol.md), until it is stopped; or,
 * with {@code --protocol gvirtus}, {@code GVirtuSServing} runs a {@link io.rdmacomm.gvirtus.GVirtuSBackend}
 * instead.
 */
package io.rdmacomm.servercomm;

/**
 * The {@code servercomm} binary: {@link io.rdmacomm.servercomm.ServerMain} parses the command line and runs a
 * {@link io.rdmacomm.servercomm.Server}, which accepts peers on one endpoint and serves each in its own thread
 * through the {@link io.rdmacomm.servercomm.session session protocol}, until it is stopped.
 */
package io.rdmacomm.servercomm;

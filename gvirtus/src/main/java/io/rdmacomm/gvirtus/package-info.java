/**
 * The GVirtuS protocol over any {@link io.rdmacomm.api.Communicator}: what a GVirtuS frontend (the guest side
 * of GPU virtualization) and backend (the host side) exchange on their byte stream, so Java middleware can take
 * either role and, over a plain byte stream, talk to the C++ GVirtuS binaries.
 *
 * <ul>
 *   <li>{@link io.rdmacomm.gvirtus.GVirtuSBuffer}: the marshaller for routine arguments and results, in the
 *       layout of GVirtuS's {@code Buffer} (little-endian scalars, pointer arguments as an 8-byte length and
 *       their bytes).</li>
 *   <li>{@link io.rdmacomm.gvirtus.GVirtuSRequest} and {@link io.rdmacomm.gvirtus.GVirtuSResult}: one request
 *       (routine name, input) and its reply (exit code, elapsed seconds, output), read from and written to a
 *       communicator within {@link io.rdmacomm.gvirtus.GVirtuSLimits}.</li>
 *   <li>{@link io.rdmacomm.gvirtus.GVirtuSFrontend}: executes routines on a connected communicator.</li>
 *   <li>{@link io.rdmacomm.gvirtus.GVirtuSBackend}: serves {@link io.rdmacomm.gvirtus.GVirtuSRoutine}s on a
 *       serving communicator, one thread per session; {@link io.rdmacomm.gvirtus.BuiltinRoutines} holds a few
 *       routines for tests and demonstrations.</li>
 *   <li>{@link io.rdmacomm.gvirtus.GVirtuSConfig}: reads the endpoints of a GVirtuS {@code properties.json}.</li>
 * </ul>
 *
 * <p>Nothing here adds bytes of its own to the stream: the framing is exactly GVirtuS's, so the classes work on
 * any communicator whose byte stream reaches the peer unchanged. The wire layout and what was checked against a
 * real GVirtuS build are in this module's README.
 */
package io.rdmacomm.gvirtus;

/**
 * A direct binding to libucp (UCX's high-level API) through {@code java.lang.foreign}, for JDK 22 and
 * later, with no JNI library of its own.
 *
 * <p>Shape: {@link io.rdmacomm.ucx.ffm.UcpContext} makes {@link io.rdmacomm.ucx.ffm.UcpWorker}s and
 * {@link io.rdmacomm.ucx.ffm.UcpMemory}; a worker makes {@link io.rdmacomm.ucx.ffm.UcpEndpoint}s (from a
 * peer's worker address, the intended path, or through a {@link io.rdmacomm.ucx.ffm.UcpListener}),
 * {@link io.rdmacomm.ucx.ffm.UcpRequest} slots and active-message handlers. Operations never allocate on the
 * Java heap once their request exists; completion is polled, and every request handle libucp returns is
 * freed exactly once by the binding.
 *
 * <p>Running it needs {@code --enable-native-access=ALL-UNNAMED} (or the module's name) and libucp 1.x
 * from 1.12 ({@code apt-get install libucx0}); {@link io.rdmacomm.ucx.ffm.Ucx#unavailabilityCause()} says what
 * is missing. Before loading libucp the binding sets {@code UCX_ERROR_SIGNALS} to empty in the process
 * environment, so that UCX does not install handlers for the signals the JVM itself relies on.
 *
 * <p>Callbacks (active-message handlers, endpoint errors, connection requests) run inside
 * {@link io.rdmacomm.ucx.ffm.UcpWorker#progress()}; an exception they throw is logged, never propagated
 * into libucp (where it would end the JVM). Thread safety is described per class and follows the worker's
 * {@link io.rdmacomm.ucx.ffm.UcpWorker.ThreadMode}.
 */
package io.rdmacomm.ucx.ffm;

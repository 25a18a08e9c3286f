/**
 * The communicator contract: a blocking, socket-like byte stream ({@link io.rdmacomm.api.Communicator})
 * chosen at run time by an {@link io.rdmacomm.api.Endpoint} URI, the provider SPI that transports implement
 * ({@link io.rdmacomm.api.CommunicatorProvider}, found by {@link java.util.ServiceLoader}), the factory
 * {@link io.rdmacomm.api.Communicators}, the error model, and the one-sided remote-memory capability
 * ({@link io.rdmacomm.api.MemoryRegion}, {@link io.rdmacomm.api.RegionDescriptor}) that every transport offers,
 * and {@link io.rdmacomm.api.RegisteredMemory}, the process's count of what is registered.
 */
package io.rdmacomm.api;

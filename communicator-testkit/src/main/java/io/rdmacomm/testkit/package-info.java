/**
 * The contract test kit every transport runs: abstract JUnit 5 tests of the stream contract
 * ({@link io.rdmacomm.testkit.CommunicatorContractTest}) and of one-sided remote memory
 * ({@link io.rdmacomm.testkit.RemoteMemoryContractTest}), each passed by a one-line subclass that hands over a
 * {@link io.rdmacomm.testkit.TransportUnderTest}; and fault-injecting wrappers ({@link io.rdmacomm.testkit.Faults})
 * for testing code above a communicator against short reads and peers that vanish mid-stream.
 */
package io.rdmacomm.testkit;

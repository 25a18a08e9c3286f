/**
 * The contract test kit every transport runs: abstract JUnit 5 tests of the stream contract
 * ({@link io.rdmacomm.testkit.CommunicatorContractTest}) and of one-sided remote memory
 * ({@link io.rdmacomm.testkit.RemoteMemoryContractTest}), each passed by a one-line subclass that hands over a
 * {@link io.rdmacomm.testkit.TransportUnderTest}; fault-injecting wrappers ({@link io.rdmacomm.testkit.Faults})
 * for testing code above a communicator against short reads and peers that vanish mid-stream; and
 * {@link io.rdmacomm.testkit.ScriptedPeer}, a mock communicator fed from a script, for unit tests of such code.
 */
package io.rdmacomm.testkit;

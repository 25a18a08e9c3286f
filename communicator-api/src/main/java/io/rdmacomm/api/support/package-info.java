/**
 * Building blocks for transport implementations, so that every transport behaves the same where the contract says
 * so: {@link io.rdmacomm.api.support.AbstractCommunicator} (roles, close, the checks of every call, delegation to the
 * transport's connection), {@link io.rdmacomm.api.support.Waiter} (waiting, waking, deadlines, interrupts) and
 * {@link io.rdmacomm.api.support.Liveness} (heartbeats and silent peers, on one thread per process).
 * Applications need nothing from this package.
 */
package io.rdmacomm.api.support;

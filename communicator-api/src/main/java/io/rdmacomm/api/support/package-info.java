/**
 * Building blocks for transport implementations, so that every transport behaves the same where the contract says
 * so: {@link io.rdmacomm.api.support.AbstractCommunicator} (roles, close, the checks of every call, delegation to the
 * transport's connection) and {@link io.rdmacomm.api.support.Waiter} (waiting, waking, deadlines, interrupts).
 * Applications need nothing from this package.
 */
package io.rdmacomm.api.support;

/**
 * Building blocks for transport implementations, so that every transport waits, wakes and times out the same way:
 * {@link io.rdmacomm.api.support.Waiter}. Applications need nothing from this package.
 */
package io.rdmacomm.api.support;

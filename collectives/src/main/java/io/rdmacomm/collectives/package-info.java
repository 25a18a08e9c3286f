/**
 * Collectives across a group of connected peers, written on the {@link io.rdmacomm.api.Communicator} contract alone
 * so they run on every transport: a {@link io.rdmacomm.collectives.PeerGroup} of communicators, broadcast from one
 * member and the seed systems' sequential all-to-all ({@link io.rdmacomm.collectives.Collectives}).
 */
package io.rdmacomm.collectives;

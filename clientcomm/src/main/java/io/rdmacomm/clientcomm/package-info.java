/**
 * The {@code clientcomm} binary: {@link io.rdmacomm.clientcomm.ClientMain} holds the options every subcommand
 * shares (the endpoint, verbosity) and opens sessions on a {@code servercomm}; each subcommand ({@code hello},
 * {@code echo}, and the seed systems' exchanges {@code send}, {@code write}, {@code read}, {@code call},
 * {@code alltoall}, {@code broadcast}) is one class that asks for the exchange it needs, speaks it through the
 * {@link io.rdmacomm.api.Communicator} contract alone, and reports on stdout. {@code gvirtus} opens no session: it
 * makes one GVirtuS routine call on any GVirtuS backend, a real one or {@code servercomm --protocol gvirtus}.
 */
package io.rdmacomm.clientcomm;

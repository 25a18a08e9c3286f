/**
 * The {@code clientcomm} binary: {@link io.rdmacomm.clientcomm.ClientMain} holds the options every subcommand
 * shares (the endpoint, verbosity) and opens sessions on a {@code servercomm}; each subcommand ({@code hello},
 * {@code echo}) is one class that asks for the exchange it needs and reports on stdout.
 */
package io.rdmacomm.clientcomm;

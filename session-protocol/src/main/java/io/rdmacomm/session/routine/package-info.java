/**
 * Routines a server runs on a client's behalf, in the GVirtuS frontend→backend style: a registry of named
 * {@link io.rdmacomm.session.routine.Routine}s, the built-ins ({@code echo}, {@code upper}, {@code sum},
 * {@code sha256}) and more from {@link java.util.ServiceLoader} plugins on the server's class path. A client
 * names a routine and sends its input; it never sends code.
 */
package io.rdmacomm.session.routine;

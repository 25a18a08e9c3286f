/**
 * Peer authentication shared by the transports: a {@link io.rdmacomm.api.auth.SharedSecret} read from a file or an
 * environment variable that an endpoint option names, and {@link io.rdmacomm.api.auth.MutualAuthentication}, the
 * HMAC-SHA-256 challenge-response both ends of a connection run over whatever byte exchange their handshake has.
 */
package io.rdmacomm.api.auth;

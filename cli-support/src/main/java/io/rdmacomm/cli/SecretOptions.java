package io.rdmacomm.cli;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.auth.SharedSecret;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The binaries' options for a shared secret (picocli mixin): sugar for the endpoint options {@code secretFile} and
 * {@code secretEnv}, which may be given in the URI instead. The secret itself is never an argument: command lines
 * are visible to every user of the host.
 */
public final class SecretOptions {
    @Option(names = "--secret-file", paramLabel = "PATH",
            description = "file holding the shared secret peers authenticate each other with (endpoint option"
                    + " secretFile)")
    Path secretFile;

    @Option(names = "--secret-env", paramLabel = "NAME",
            description = "environment variable holding the shared secret (endpoint option secretEnv)")
    String secretEnv;

    /**
     * {@code endpoint} with the secret options given here, checked by loading the secret once.
     *
     * @throws IllegalArgumentException if the scheme does not authenticate, or the secret cannot be loaded
     */
    public Endpoint applyTo(Endpoint endpoint) {
        Endpoint e = endpoint;
        if (secretFile != null) {
            e = e.with(EndpointOption.SECRET_FILE, secretFile.toString());
        }
        if (secretEnv != null) {
            e = e.with(EndpointOption.SECRET_ENV, secretEnv);
        }
        SharedSecret.of(e);
        return e;
    }

    /**
     * Why serving {@code endpoint} is risky, if it is: reachable from other hosts (not a loopback address) and
     * without a shared secret, so anyone who reaches the port runs every exchange.
     */
    public static Optional<String> exposureWarning(Endpoint endpoint) {
        if (endpoint.scheme().equals("local") || !SharedSecret.of(endpoint).isEmpty()) {
            return Optional.empty();
        }
        try {
            if (InetAddress.getByName(endpoint.host()).isLoopbackAddress()) {
                return Optional.empty();
            }
        } catch (UnknownHostException e) {
            return Optional.empty(); // serving it fails anyway, with its own message
        }
        return Optional.of("listening on " + endpoint.authority() + ", which other hosts may reach, without a shared"
                + " secret: any peer that reaches it can run every exchange; give --secret-file or --secret-env"
                + " (README.md, Security)");
    }
}

package io.rdmacomm.api.auth;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key both ends of a connection hold to authenticate each other. It comes from a file or from an environment
 * variable, named by the endpoint options {@code secretFile} or {@code secretEnv}; the secret itself never appears
 * in a URI, a message or a log ({@link #toString()} names only where it came from). Trailing line breaks are not
 * part of the secret, so {@code echo ... > file} works. A secret shorter than {@link #MIN_BYTES} is refused.
 */
public final class SharedSecret {
    /** The shortest secret accepted. */
    public static final int MIN_BYTES = 16;
    private static final Logger LOG = LoggerFactory.getLogger(SharedSecret.class);

    private final byte[] key;
    private final String source;

    private SharedSecret(byte[] key, String source) {
        if (key.length < MIN_BYTES) {
            throw new IllegalArgumentException("the shared secret from " + source + " has " + key.length
                    + " bytes; at least " + MIN_BYTES + " are needed");
        }
        this.key = key;
        this.source = source;
    }

    /**
     * The secret an endpoint's options name, if any.
     *
     * @throws IllegalArgumentException if both options are set, or the file or variable is missing, unreadable,
     *     empty or too short (the message names the file or variable, never the secret)
     */
    public static Optional<SharedSecret> of(Endpoint endpoint) {
        return of(endpoint, System.getenv());
    }

    static Optional<SharedSecret> of(Endpoint endpoint, Map<String, String> environment) {
        boolean file = !endpoint.string(EndpointOption.SECRET_FILE).isEmpty();
        boolean env = !endpoint.string(EndpointOption.SECRET_ENV).isEmpty();
        if (file && env) {
            throw new IllegalArgumentException("options secretFile and secretEnv both name a secret; give one");
        }
        if (file) {
            return Optional.of(fromFile(Path.of(endpoint.string(EndpointOption.SECRET_FILE))));
        }
        if (env) {
            return Optional.of(fromEnvironment(endpoint.string(EndpointOption.SECRET_ENV), environment));
        }
        return Optional.empty();
    }

    /** The secret in a file; warns once if others than its owner may read the file. */
    public static SharedSecret fromFile(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the shared secret file " + file + ": " + e, e);
        }
        warnIfReadableByOthers(file);
        return new SharedSecret(stripLineBreaks(bytes), "file " + file);
    }

    static SharedSecret fromEnvironment(String variable, Map<String, String> environment) {
        String value = environment.get(variable);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("environment variable " + variable + " (secretEnv) is not set");
        }
        return new SharedSecret(stripLineBreaks(value.getBytes(StandardCharsets.UTF_8)),
                "environment variable " + variable);
    }

    private static byte[] stripLineBreaks(byte[] b) {
        int n = b.length;
        while (n > 0 && (b[n - 1] == '\n' || b[n - 1] == '\r')) {
            n--;
        }
        return Arrays.copyOf(b, n);
    }

    private static void warnIfReadableByOthers(Path file) {
        PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (view == null) {
            return;
        }
        try {
            Set<PosixFilePermission> p = view.readAttributes().permissions();
            if (p.contains(PosixFilePermission.GROUP_READ) || p.contains(PosixFilePermission.OTHERS_READ)) {
                LOG.warn("the shared secret file {} is readable by others than its owner (chmod 600 it)", file);
            }
        } catch (IOException e) {
            LOG.debug("cannot read the permissions of {}", file, e);
        }
    }

    /** The key bytes, for the MAC; a copy, so callers cannot change the secret. */
    byte[] key() {
        return key.clone();
    }

    @Override
    public String toString() {
        return "shared secret from " + source;
    }
}

package io.rdmacomm.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Shared-secret files for authentication tests: a right and a wrong secret, readable by their owner only. */
public record SecretFiles(Path right, Path wrong) {

    /** Writes both secrets into {@code dir}. */
    public static SecretFiles in(Path dir) throws IOException {
        return new SecretFiles(write(dir.resolve("right"), "a shared secret of some length"),
                write(dir.resolve("wrong"), "another secret of some length"));
    }

    private static Path write(Path p, String text) throws IOException {
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        return p;
    }
}

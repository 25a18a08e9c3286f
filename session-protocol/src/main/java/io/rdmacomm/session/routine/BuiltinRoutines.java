package io.rdmacomm.session.routine;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** The routines every server has. */
final class BuiltinRoutines {
    private BuiltinRoutines() {
    }

    static List<Routine> all() {
        return List.of(
                simple("echo", "returns its input unchanged", in -> in),
                simple("upper", "returns its UTF-8 input in upper case",
                        in -> new String(in, UTF_8).toUpperCase(Locale.ROOT).getBytes(UTF_8)),
                new Sum(),
                simple("sha256", "returns the lower-case hex SHA-256 digest of its input",
                        in -> HexFormat.of().formatHex(sha256(in)).getBytes(UTF_8)));
    }

    private static byte[] sha256(byte[] in) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(in);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static Routine simple(String name, String description, Function<byte[], byte[]> body) {
        return new Routine() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public String description() {
                return description;
            }

            @Override
            public byte[] run(byte[] input) {
                return body.apply(input);
            }
        };
    }

    /**
     * Adds integers separated by white space or commas. Parsing a decimal integer costs the square of its length,
     * so one integer is limited to {@link #MAX_DIGITS} digits: the whole sum then costs time linear in the input.
     */
    static final class Sum implements Routine {
        static final int MAX_DIGITS = 1000;

        @Override
        public String name() {
            return "sum";
        }

        @Override
        public String description() {
            return "returns the sum of the integers in its input (separated by spaces or commas)";
        }

        @Override
        public byte[] run(byte[] input) throws RoutineException {
            String text = new String(input, UTF_8).trim();
            BigInteger sum = BigInteger.ZERO;
            if (!text.isEmpty()) {
                for (String token : text.split("[\\s,]+")) {
                    if (Thread.interrupted()) {
                        throw new RoutineException("sum: interrupted");
                    }
                    int digits = token.length() - (token.startsWith("-") || token.startsWith("+") ? 1 : 0);
                    if (digits > MAX_DIGITS) {
                        throw new RoutineException("sum: an integer of " + digits + " digits; at most " + MAX_DIGITS
                                + " digits are added");
                    }
                    try {
                        sum = sum.add(new BigInteger(token));
                    } catch (NumberFormatException e) {
                        throw new RoutineException("sum: '" + token + "' is not an integer");
                    }
                }
            }
            return sum.toString().getBytes(UTF_8);
        }
    }
}

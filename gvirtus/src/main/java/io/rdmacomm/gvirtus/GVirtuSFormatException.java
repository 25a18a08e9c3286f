package io.rdmacomm.gvirtus;

/**
 * Bytes that do not hold what a reader asked for: a {@link GVirtuSBuffer} read past its end, a length that does
 * not fit the bytes left, a string without its terminating NUL. The message names what was being read, where,
 * and how many bytes were needed and left.
 *
 * <p>Unchecked, because it reports malformed routine arguments found while a routine decodes its input; the
 * backend turns it, like any exception from a routine, into an error exit code.
 */
public final class GVirtuSFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GVirtuSFormatException(String message) {
        super(message);
    }
}

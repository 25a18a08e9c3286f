package io.rdmacomm.kvstore;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;

/** {@link KvException}s as gRPC statuses and back: the status code, and the kind in the trailer "kv-error". */
final class GrpcErrors {
    private static final Metadata.Key<String> KIND = Metadata.Key.of("kv-error", Metadata.ASCII_STRING_MARSHALLER);

    private GrpcErrors() {
    }

    static StatusRuntimeException toStatus(KvException e) {
        Status status = switch (e.code()) {
            case NOT_FOUND, NO_SESSION -> Status.NOT_FOUND;
            case POOL_FULL, BUSY -> Status.RESOURCE_EXHAUSTED;
            case VALUE_TOO_LARGE, BAD_KEY, BAD_REQUEST -> Status.INVALID_ARGUMENT;
            case BUFFER_TOO_SMALL -> Status.FAILED_PRECONDITION;
            case TRANSFER_FAILED -> Status.INTERNAL;
        };
        Metadata trailers = new Metadata();
        trailers.put(KIND, e.code().name());
        return status.withDescription(e.getMessage()).asRuntimeException(trailers);
    }

    /**
     * The client's view of a failed call: a {@link KvException} when the server named a kind, else an
     * {@link IOException} that says what {@code what} was and why it failed.
     */
    static IOException fromStatus(StatusRuntimeException e, String what) {
        Metadata trailers = e.getTrailers();
        String kind = trailers == null ? null : trailers.get(KIND);
        String description = e.getStatus().getDescription();
        if (kind != null) {
            try {
                return new KvException(KvException.Code.valueOf(kind), description);
            } catch (IllegalArgumentException unknown) {
                // a newer server's kind: report it as a plain failure below
            }
        }
        return new IOException(what + " failed: " + e.getStatus().getCode()
                + (description == null ? "" : ": " + description), e);
    }
}

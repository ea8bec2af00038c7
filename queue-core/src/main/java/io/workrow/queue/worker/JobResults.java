package io.workrow.queue.worker;

import io.workrow.queue.payload.PayloadCodec;
import java.nio.charset.StandardCharsets;

/**
 * Writes a handler's return value as the JSON its completion stores, within the size limit. A
 * value that cannot be stored is the job's end, not a retry: the same run would return it again.
 * The value itself is never part of a message, since results may hold what logs must not.
 */
final class JobResults {

    private final PayloadCodec codec;
    private final int maxBytes;
    private final ErrorDescriber errors;

    JobResults(PayloadCodec codec, int maxBytes, ErrorDescriber errors) {
        this.codec = codec;
        this.maxBytes = maxBytes;
        this.errors = errors;
    }

    /**
     * The JSON to store for {@code value}, or {@code null} when the handler returned nothing.
     *
     * @throws UnstorableResultException when it cannot be written as JSON or is over the limit
     */
    String encode(Object value) {
        if (value == null) {
            return null;
        }
        String json;
        try {
            json = codec.encode(value);
        } catch (RuntimeException e) {
            throw new UnstorableResultException("result of type " + value.getClass().getName()
                    + " could not be written as JSON: " + errors.describe(e));
        }
        // Cheap bound first: a UTF-8 character takes at most three bytes per UTF-16 unit.
        if (json.length() * 3L > maxBytes) {
            int bytes = json.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > maxBytes) {
                throw new UnstorableResultException("result of " + bytes + " bytes as JSON is over the limit of "
                        + maxBytes + " (workrow.max-result-size); store large data elsewhere and return a reference");
            }
        }
        return json;
    }

    /** A result the completion cannot store: the job goes to {@code dead} with this message. */
    static final class UnstorableResultException extends RuntimeException {

        UnstorableResultException(String message) {
            super(message, null, false, false);
        }
    }
}

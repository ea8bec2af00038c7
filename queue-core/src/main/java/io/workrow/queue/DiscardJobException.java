package io.workrow.queue;

/**
 * Thrown by a handler to retire its job at once: no further attempts, status {@code dead}, this
 * exception's message as {@code last_error}. For work that can never succeed, such as a request
 * that refers to a deleted record.
 */
public class DiscardJobException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public DiscardJobException(String message) {
        super(message);
    }

    public DiscardJobException(String message, Throwable cause) {
        super(message, cause);
    }
}

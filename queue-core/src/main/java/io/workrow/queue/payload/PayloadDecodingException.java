package io.workrow.queue.payload;

/** A stored payload could not be read as the handler's payload type; the job cannot run. */
public class PayloadDecodingException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public PayloadDecodingException(String message, Throwable cause) {
        super(message, cause);
    }
}

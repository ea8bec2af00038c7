package io.workrow.queue;

/**
 * This worker no longer holds the job's lease: it expired and the sweeper gave the job back, or
 * the job was released or cancelled. Another worker may be running it; stop working on it.
 */
public class JobLeaseLostException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public JobLeaseLostException(String message) {
        super(message);
    }
}

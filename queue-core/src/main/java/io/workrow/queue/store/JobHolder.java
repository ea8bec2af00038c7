package io.workrow.queue.store;

import io.workrow.queue.JobStatus;

/**
 * A job's status and current token, read without a lock to tell why a fenced batch statement did
 * not match it.
 *
 * @param leaseToken the token now on the row, {@code null} unless it is running
 */
public record JobHolder(long id, JobStatus status, Long leaseToken) {

    /** Whether the worker presenting {@code token} still holds the job (the row was only locked). */
    public boolean heldBy(long token) {
        return leaseToken != null && leaseToken == token;
    }
}

package io.workrow.queue.store;

import io.workrow.queue.JobStatus;

/**
 * A job a maintenance statement moved, as it is afterwards: for logs and counts.
 *
 * @param previousOwner the worker that held it before, where the statement knows it
 * @param leaseExpiries how often its lease has expired, where the statement knows it (else 0)
 */
public record MovedJob(long id, String queue, JobStatus status, int attempts, int maxAttempts,
        String previousOwner, int leaseExpiries) {
}

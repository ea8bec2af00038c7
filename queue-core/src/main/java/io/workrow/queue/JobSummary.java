package io.workrow.queue;

import java.time.Instant;

/** A job as an operator sees it: everything but the payload, which may hold personal data. */
public record JobSummary(long id, String queue, JobStatus status, int attempts, int maxAttempts, String claimedBy,
        Instant leaseExpiresAt, Instant runAt, String lastError, Instant lastErrorAt, Instant createdAt) {
}

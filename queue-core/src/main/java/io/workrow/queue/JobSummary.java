package io.workrow.queue;

import java.time.Instant;

/**
 * A job as an operator sees it: everything but the payload, which may hold personal data.
 *
 * @param attempts attempts claimed so far (a lease expiry on a queue with max-lease-expiries gives its attempt back)
 * @param leaseExpiries how often the job's lease expired because its worker died or froze, apart from handler failures
 */
public record JobSummary(long id, String queue, JobStatus status, int attempts, int maxAttempts, String claimedBy,
        Instant leaseExpiresAt, Instant runAt, String lastError, Instant lastErrorAt, Instant createdAt,
        int leaseExpiries) {
}

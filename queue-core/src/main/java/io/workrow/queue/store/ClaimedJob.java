package io.workrow.queue.store;

import java.time.Instant;

/**
 * A job this worker holds under a lease. {@code leaseToken} is the fence every later update of
 * the row must present.
 *
 * @param attempt the attempt now running, counting from 1 (already counted at claim)
 */
public record ClaimedJob(
        long id,
        String queue,
        String partitionKey,
        String idempotencyKey,
        String payloadJson,
        String headersJson,
        int attempt,
        int maxAttempts,
        String step,
        long leaseToken,
        Instant runAt) {
}

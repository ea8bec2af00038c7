package io.workrow.queue.store;

import java.time.Instant;

/**
 * One row to insert, already validated and encoded by the producer.
 *
 * @param runAt absolute due time, or {@code null} to use {@code delayMillis} from the database's now
 */
public record NewJob(
        String queue,
        String partitionKey,
        int partitionBucket,
        int priority,
        String idempotencyKey,
        String payloadJson,
        String headersJson,
        Instant runAt,
        long delayMillis,
        int maxAttempts) {
}

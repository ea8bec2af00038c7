package io.workrow.queue.store;

import java.time.Instant;

/**
 * One row to insert, already validated and encoded by the producer.
 *
 * @param runAt absolute due time, or {@code null} to use {@code delayMillis} from the database's now
 * @param fairnessKey the key a fair queue shares its work by, or {@code null} for the partition key
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
        int maxAttempts,
        String fairnessKey) {

    /** A job whose fairness key is its partition key. */
    public NewJob(String queue, String partitionKey, int partitionBucket, int priority, String idempotencyKey,
            String payloadJson, String headersJson, Instant runAt, long delayMillis, int maxAttempts) {
        this(queue, partitionKey, partitionBucket, priority, idempotencyKey, payloadJson, headersJson, runAt,
                delayMillis, maxAttempts, null);
    }
}

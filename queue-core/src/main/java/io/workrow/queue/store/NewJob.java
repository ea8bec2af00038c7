package io.workrow.queue.store;

import io.workrow.queue.KeyScope;
import java.time.Instant;
import java.util.List;

/**
 * One row to insert, already validated and encoded by the producer.
 *
 * @param runAt absolute due time, or {@code null} to use {@code delayMillis} from the database's now
 * @param fairnessKey the key a fair queue shares its work by, or {@code null} for the partition key
 * @param after the jobs it waits to complete, in the order named (empty: none)
 * @param afterSettled the jobs it waits to end, however they end (empty: none)
 * @param expiresAt the job's deadline: no attempt starts at or after it ({@code null}: none)
 * @param timeoutMillis the job's own handler timeout in milliseconds ({@code null}: its queue's)
 * @param keyScope how long its idempotency key holds against the job that has it now
 * @param replaceWaiting whether it replaces the payload and due time of its key's job while that job
 *     waits (and takes the key over once that job has started)
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
        String fairnessKey,
        List<Long> after,
        List<Long> afterSettled,
        Instant expiresAt,
        Long timeoutMillis,
        KeyScope keyScope,
        boolean replaceWaiting) {

    public NewJob {
        keyScope = keyScope == null ? KeyScope.WHILE_RETAINED : keyScope;
        after = after == null ? List.of() : List.copyOf(after);
        afterSettled = afterSettled == null ? List.of() : List.copyOf(afterSettled);
    }

    /** A job without a deadline or a timeout of its own. */
    public NewJob(String queue, String partitionKey, int partitionBucket, int priority, String idempotencyKey,
            String payloadJson, String headersJson, Instant runAt, long delayMillis, int maxAttempts,
            String fairnessKey, List<Long> after, List<Long> afterSettled) {
        this(queue, partitionKey, partitionBucket, priority, idempotencyKey, payloadJson, headersJson, runAt,
                delayMillis, maxAttempts, fairnessKey, after, afterSettled, null, null, KeyScope.WHILE_RETAINED,
                false);
    }

    /** A job that waits for no other. */
    public NewJob(String queue, String partitionKey, int partitionBucket, int priority, String idempotencyKey,
            String payloadJson, String headersJson, Instant runAt, long delayMillis, int maxAttempts,
            String fairnessKey) {
        this(queue, partitionKey, partitionBucket, priority, idempotencyKey, payloadJson, headersJson, runAt,
                delayMillis, maxAttempts, fairnessKey, List.of(), List.of());
    }

    /** Whether its key, when taken, may be taken over from a job no longer within this job's scope. */
    public boolean keyMayMove() {
        return idempotencyKey != null && (keyScope != KeyScope.WHILE_RETAINED || replaceWaiting);
    }

    /** The scope its key is taken over by: a replacing enqueue's is {@code WHILE_WAITING}, whatever it named. */
    public KeyScope keyScopeForMove() {
        return replaceWaiting ? KeyScope.WHILE_WAITING : keyScope;
    }

    /** Whether it waits for other jobs. */
    public boolean waits() {
        return !after.isEmpty() || !afterSettled.isEmpty();
    }

    /** A job whose fairness key is its partition key. */
    public NewJob(String queue, String partitionKey, int partitionBucket, int priority, String idempotencyKey,
            String payloadJson, String headersJson, Instant runAt, long delayMillis, int maxAttempts) {
        this(queue, partitionKey, partitionBucket, priority, idempotencyKey, payloadJson, headersJson, runAt,
                delayMillis, maxAttempts, null);
    }
}

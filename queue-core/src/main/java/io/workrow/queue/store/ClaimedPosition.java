package io.workrow.queue.store;

import java.time.Duration;
import java.time.Instant;

/**
 * A job claimed in a batch of the write-once layout: its claim's {@code token} and its
 * {@code position} in that claim (from 1) are the fence every end of it presents.
 *
 * @param attempt the attempt now running, counting from 1 (counted at claim)
 * @param expiries how often the job's lease has expired before this attempt
 * @param runAt the due time it was claimed at
 * @param lastError the error of its last failed attempt, if any, as its waiting row had it
 * @param lastErrorAt when that error happened
 * @param batchId the batch it belongs to ({@code JobQueue.batch()}), or {@code null}
 * @param waitedOn whether, when claimed, other jobs waited for it or it was a batch member: its
 *     end then goes straight to the settling path (a dependent registered later is caught by the
 *     lean ends' gate)
 * @param timeout the job's own handler timeout ({@code JobRequest.timeout}), or {@code null} for its queue's
 * @param startDeadlineNanos the {@link System#nanoTime()} at and after which the job must not start
 *     ({@code JobRequest.expiresAt}), or {@link Long#MAX_VALUE} for none: the deadline less the
 *     database's time at the claim, counted from before the claim was sent, so it is never late
 * @param snoozes how often the job has snoozed ({@code SnoozeJobException}), each snooze's attempt
 *     given back
 */
public record ClaimedPosition(
        long token,
        int position,
        long id,
        String queue,
        String partitionKey,
        String idempotencyKey,
        String payloadJson,
        String headersJson,
        int attempt,
        int maxAttempts,
        int expiries,
        String step,
        Instant runAt,
        String lastError,
        Instant lastErrorAt,
        Long batchId,
        boolean waitedOn,
        Duration timeout,
        long startDeadlineNanos,
        int snoozes) {

    /** A job without a deadline, a timeout of its own or snoozes. */
    public ClaimedPosition(long token, int position, long id, String queue, String partitionKey,
            String idempotencyKey, String payloadJson, String headersJson, int attempt, int maxAttempts, int expiries,
            String step, Instant runAt, String lastError, Instant lastErrorAt, Long batchId, boolean waitedOn) {
        this(token, position, id, queue, partitionKey, idempotencyKey, payloadJson, headersJson, attempt, maxAttempts,
                expiries, step, runAt, lastError, lastErrorAt, batchId, waitedOn, null, Long.MAX_VALUE, 0);
    }

    /** Whether the job's deadline has passed: it must not start. */
    public boolean pastDeadline() {
        return startDeadlineNanos != Long.MAX_VALUE && System.nanoTime() - startDeadlineNanos >= 0;
    }

    /** A job of no batch. */
    public ClaimedPosition(long token, int position, long id, String queue, String partitionKey,
            String idempotencyKey, String payloadJson, String headersJson, int attempt, int maxAttempts, int expiries,
            String step, Instant runAt, String lastError, Instant lastErrorAt) {
        this(token, position, id, queue, partitionKey, idempotencyKey, payloadJson, headersJson, attempt, maxAttempts,
                expiries, step, runAt, lastError, lastErrorAt, null, false);
    }
}

package io.workrow.queue;

import java.time.Instant;

/**
 * A hold on a queue, or on one partition key of it, as every node sees it (a row of
 * {@code workrow_hold}): no node claims what it covers until {@code until}. Set by a handler's
 * {@link SnoozeJobException#wholeQueue()} or {@link SnoozeJobException#wholeKey()} (a partner
 * answered 429 with {@code Retry-After}), or by an operator ({@link QueueAdmin#hold}).
 *
 * @param partitionKey the key held, or {@code null} when the whole queue is held
 * @param until when the hold ends, by the database's clock
 * @param reason why it was set (the snooze's message, or the operator's reason)
 * @param heldBy the worker whose handler set it, or {@code null} for an operator
 * @param heldAt when it was set or last extended
 */
public record QueueHold(String queue, String partitionKey, Instant until, String reason, String heldBy,
        Instant heldAt) {

    /** Whether the whole queue is held, not one key. */
    public boolean wholeQueue() {
        return partitionKey == null;
    }
}

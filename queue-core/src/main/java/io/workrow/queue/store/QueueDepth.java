package io.workrow.queue.store;

import java.time.Duration;

/**
 * A queue's open work, read cheaply from the partial indexes: for gauges, health and
 * {@code QueueAdmin.stats}.
 *
 * @param pending jobs waiting to be claimed
 * @param due the pending jobs whose {@code run_at} has passed
 * @param scheduled jobs due later (a future run_at, or a retry's backoff)
 * @param lag how long the oldest due pending job has waited; zero when none is due
 * @param waiting jobs waiting for other jobs to end, not claimable yet
 */
public record QueueDepth(String queue, long pending, long due, long scheduled, long running, long dead,
        Duration lag, long waiting) {

    /** A queue with no open work. */
    public static QueueDepth empty(String queue) {
        return new QueueDepth(queue, 0, 0, 0, 0, 0, Duration.ZERO, 0);
    }
}

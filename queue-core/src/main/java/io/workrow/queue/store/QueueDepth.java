package io.workrow.queue.store;

import java.time.Duration;

/**
 * A queue's open work, read cheaply from the partial indexes: for gauges and health.
 *
 * @param pending jobs due now, waiting to be claimed
 * @param scheduled jobs due later (a future run_at, or a retry's backoff)
 * @param lag how long the oldest due pending job has waited; zero when none is due
 */
public record QueueDepth(String queue, long pending, long scheduled, long running, long dead, Duration lag) {
}

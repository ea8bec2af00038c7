package io.workrow.queue.store;

import java.time.Duration;

/**
 * A queue's open work, read cheaply from the partial indexes: for gauges and health.
 *
 * @param lag how long the oldest due pending job has waited; zero when none is due
 */
public record QueueDepth(String queue, long pending, long running, long dead, Duration lag) {
}

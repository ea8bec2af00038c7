package io.workrow.queue.worker;

import java.time.Duration;

/**
 * How one queue is worked.
 *
 * @param concurrency most handlers of this queue running at once in one runtime
 * @param batchSize most jobs claimed by one statement (fewer when fewer slots are free)
 * @param lease how long a claim holds a job before the sweeper may give it to another worker
 * @param backoff the wait before a failed job's next attempt
 */
public record QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff) {

    /** Default handlers at once per queue. */
    public static final int DEFAULT_CONCURRENCY = 8;
    /** Default most jobs per claim. */
    public static final int DEFAULT_BATCH_SIZE = 16;
    /** Default lease. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(5);

    public QueueOptions {
        Settings.requireAtLeast("concurrency", 1, concurrency);
        Settings.requireAtLeast("batch-size", 1, batchSize);
        Settings.requirePositive("lease", lease);
        if (backoff == null) {
            throw new IllegalArgumentException("backoff must be set");
        }
    }

    /** Concurrency 8, batches of 16, a 5-minute lease, the default backoff. */
    public static QueueOptions defaults() {
        return new QueueOptions(DEFAULT_CONCURRENCY, DEFAULT_BATCH_SIZE, DEFAULT_LEASE, RetryBackoff.DEFAULT);
    }

    public QueueOptions withConcurrency(int concurrency) {
        return new QueueOptions(concurrency, batchSize, lease, backoff);
    }

    public QueueOptions withBatchSize(int batchSize) {
        return new QueueOptions(concurrency, batchSize, lease, backoff);
    }

    public QueueOptions withLease(Duration lease) {
        return new QueueOptions(concurrency, batchSize, lease, backoff);
    }

    public QueueOptions withBackoff(RetryBackoff backoff) {
        return new QueueOptions(concurrency, batchSize, lease, backoff);
    }
}

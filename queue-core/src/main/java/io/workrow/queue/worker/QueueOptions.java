package io.workrow.queue.worker;

import java.time.Duration;

/**
 * How one queue is worked.
 *
 * @param concurrency most handlers of this queue running at once in one runtime
 * @param batchSize most jobs claimed by one statement (fewer when fewer slots are free)
 * @param lease how long a claim holds a job without a renewal; the runtime renews it while the
 *     handler runs, so it bounds how soon a crashed or frozen worker's jobs run elsewhere, not how
 *     long a handler may take
 * @param backoff the wait before a failed job's next attempt
 * @param timeout the longest a handler may run before it is interrupted and the attempt fails, or
 *     {@code null} for no limit
 */
public record QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff, Duration timeout) {

    /** Default handlers at once per queue. */
    public static final int DEFAULT_CONCURRENCY = 8;
    /** Default most jobs per claim. */
    public static final int DEFAULT_BATCH_SIZE = 16;
    /** Default lease. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(5);
    /** The shortest lease: renewals run every third of it, and must not flood the database. */
    public static final Duration MIN_LEASE = Duration.ofSeconds(1);

    public QueueOptions {
        Settings.requireAtLeast("concurrency", 1, concurrency);
        Settings.requireAtLeast("batch-size", 1, batchSize);
        Settings.requirePositive("lease", lease);
        if (lease.compareTo(MIN_LEASE) < 0) {
            throw new IllegalArgumentException("lease must be at least " + MIN_LEASE + ", was " + lease);
        }
        if (backoff == null) {
            throw new IllegalArgumentException("backoff must be set");
        }
        if (timeout != null) {
            Settings.requirePositive("timeout", timeout);
        }
    }

    /** Without a handler timeout. */
    public QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff) {
        this(concurrency, batchSize, lease, backoff, null);
    }

    /** Concurrency 8, batches of 16, a 5-minute lease, the default backoff, no timeout. */
    public static QueueOptions defaults() {
        return new QueueOptions(DEFAULT_CONCURRENCY, DEFAULT_BATCH_SIZE, DEFAULT_LEASE, RetryBackoff.DEFAULT, null);
    }

    public QueueOptions withConcurrency(int concurrency) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout);
    }

    public QueueOptions withBatchSize(int batchSize) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout);
    }

    public QueueOptions withLease(Duration lease) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout);
    }

    public QueueOptions withBackoff(RetryBackoff backoff) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout);
    }

    /** Handlers running longer than {@code timeout} are interrupted and their attempt fails. */
    public QueueOptions withTimeout(Duration timeout) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout);
    }
}

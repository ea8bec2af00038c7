package io.workrow.queue.worker;

import io.workrow.queue.store.RecoveryRule;
import java.time.Duration;
import java.util.Locale;

/**
 * How one queue is worked.
 *
 * @param concurrency most handlers of this queue running at once in one runtime
 * @param batchSize most jobs claimed by one statement (fewer when there is less room: free slots
 *     plus the prefetch)
 * @param lease how long a claim holds a job without a renewal; the runtime renews it while the
 *     handler runs, so it bounds how soon a crashed or frozen worker's jobs run elsewhere, not how
 *     long a handler may take
 * @param backoff the wait before a failed job's next attempt
 * @param timeout the longest a handler may run before it is interrupted and the attempt fails, or
 *     {@code null} for no limit
 * @param maxLeaseExpiries how many times a job's lease may expire (its worker crashed or froze
 *     while running it) before the job is dead; with a limit, an expiry no longer spends one of
 *     the job's attempts, which are left to handler failures. Zero for no limit of its own: an
 *     expiry then spends the attempt it was claimed with, as a failure does
 * @param breaker the queue's circuit breaker, or {@code null} for none
 * @param ordering whether jobs with one partition key run one at a time in enqueue order
 * @param fairness how the queue's work is shared among fairness keys; not with ordering
 * @param prefetch most jobs claimed ahead of free handler slots, waiting in the runtime to start
 *     (their leases renewed; handed back unstarted at shutdown), so the next claim's round trip
 *     overlaps running handlers; zero claims only for free slots; {@link #ADAPTIVE_PREFETCH} (the
 *     default) lets the runtime keep about {@link AdaptivePrefetch#HORIZON} of its handlers'
 *     measured throughput in line, at most two claims ({@code 2 × batchSize}). A fixed prefetch is
 *     not available with a circuit breaker, nor with burst or spaced fairness or a per-key cap, whose
 *     limits count claims; there the adaptive one stays at zero
 * @param maxAttempts the attempts a job of this queue gets when its enqueue names none; declared
 *     in the database at start, where {@code workrow_enqueue} (SQL) reads it
 * @param maxSnoozes how often one job may snooze ({@code SnoozeJobException}) before its next
 *     snooze counts as a failed attempt
 * @param globalConcurrency at most this many of the queue's jobs running at once across every node
 *     (declared in the database at start; 0 for no cap): each node starts them within its share of
 *     the cap, and jobs waiting in a node's line hold no share
 * @param keyConcurrency at most this many jobs of one partition key claimed at once across every
 *     node (0 for no cap); not with ordering or fairness, and claims then take no prefetch
 */
public record QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff, Duration timeout,
        int maxLeaseExpiries, BreakerOptions breaker, KeyOrdering ordering, FairnessOptions fairness, int prefetch,
        int maxAttempts, int maxSnoozes, int globalConcurrency, int keyConcurrency) {

    /** Default handlers at once per queue. */
    public static final int DEFAULT_CONCURRENCY = 8;
    /**
     * Default most jobs per claim. A claim takes no more than the poller's room (free slots plus the
     * prefetch), so with slow handlers claims stay small whatever this says; it caps the large
     * claims that short handlers need to keep the database's round trips off their path. Part of
     * a claim's cost is per statement and grows with the ready rows claimed since the last vacuum
     * (most likely the claim's index scan stepping over their entries), so a drain of a large backlog runs
     * fastest, and spends least of the database per job, with large claims.
     */
    public static final int DEFAULT_BATCH_SIZE = 2000;
    /** Default lease. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(5);
    /** A prefetch the runtime adapts to its handlers' measured throughput: see {@link AdaptivePrefetch}. */
    public static final int ADAPTIVE_PREFETCH = -1;
    /** Default most jobs claimed ahead of free slots: adaptive. */
    public static final int DEFAULT_PREFETCH = ADAPTIVE_PREFETCH;
    /** Default attempts of a job whose enqueue names none. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /** Default most snoozes of one job. */
    public static final int DEFAULT_MAX_SNOOZES = 100;
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
        Settings.requireAtLeast("max-lease-expiries", 0, maxLeaseExpiries);
        Settings.requireAtLeast("max-attempts", 1, maxAttempts);
        Settings.requireAtLeast("max-snoozes", 0, maxSnoozes);
        Settings.requireAtLeast("global-concurrency", 0, globalConcurrency);
        Settings.requireAtLeast("key-concurrency", 0, keyConcurrency);
        if (keyConcurrency > 0 && (ordering != KeyOrdering.NONE || fairness.fair())) {
            throw new IllegalArgumentException("key-concurrency is not available with ordered or fair queues: an"
                    + " ordered queue runs one job per key already, and a fair one shares its starts among keys");
        }
        if (prefetch > 0 && keyConcurrency > 0) {
            throw new IllegalArgumentException("prefetch is not available with key-concurrency: jobs claimed ahead"
                    + " would hold their keys' slots while they wait (prefetch " + prefetch + ")");
        }
        if (prefetch < 0 && prefetch != ADAPTIVE_PREFETCH) {
            throw new IllegalArgumentException("prefetch must be at least 0, or ADAPTIVE_PREFETCH (-1) to let the"
                    + " runtime size it, was " + prefetch);
        }
        if (ordering == null) {
            throw new IllegalArgumentException("ordering must be set (KeyOrdering.NONE for none)");
        }
        if (fairness == null) {
            throw new IllegalArgumentException("fairness must be set (FairnessOptions.NONE for none)");
        }
        if (prefetch > 0 && breaker != null) {
            // Jobs claimed ahead would start against a dependency the breaker has just shut off.
            throw new IllegalArgumentException("prefetch is not available with a circuit breaker: jobs claimed"
                    + " ahead would still start while it is open (prefetch " + prefetch + ")");
        }
        if (prefetch > 0 && fairness.fair() && fairness.mode() != FairnessMode.WEIGHTED) {
            // Burst and spaced limit starts per key: they count at the claim, which is the start only without a line.
            throw new IllegalArgumentException("prefetch is not available with fairness."
                    + fairness.mode().name().toLowerCase(Locale.ROOT)
                    + ": its rate counts claims, and jobs waiting in line would start together (prefetch "
                    + prefetch + ")");
        }
        if (ordering != KeyOrdering.NONE && fairness.fair()) {
            // One statement cannot both hold a key to one job and share starts among keys.
            throw new IllegalArgumentException("a queue is either ordered or fair, not both (ordered and fairness."
                    + fairness.mode().name().toLowerCase(Locale.ROOT) + ")");
        }
    }

    /** With the default max-attempts and max-snoozes, and no cluster-wide cap. */
    public QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff, Duration timeout,
            int maxLeaseExpiries, BreakerOptions breaker, KeyOrdering ordering, FairnessOptions fairness, int prefetch) {
        this(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering, fairness, prefetch,
                DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_SNOOZES, 0, 0);
    }

    /** Without fair queuing, with the default prefetch. */
    public QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff, Duration timeout,
            int maxLeaseExpiries, BreakerOptions breaker, KeyOrdering ordering) {
        this(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                FairnessOptions.NONE, DEFAULT_PREFETCH);
    }

    /** Without a handler timeout, a lease expiry limit or a breaker. */
    public QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff) {
        this(concurrency, batchSize, lease, backoff, null);
    }

    /** Without a lease expiry limit, a breaker or ordering. */
    public QueueOptions(int concurrency, int batchSize, Duration lease, RetryBackoff backoff, Duration timeout) {
        this(concurrency, batchSize, lease, backoff, timeout, 0, null, KeyOrdering.NONE);
    }

    /**
     * Concurrency 8, claims of at most 2,000, an adaptive prefetch, a 5-minute lease, the default
     * backoff, no timeout, no breaker.
     */
    public static QueueOptions defaults() {
        return new QueueOptions(DEFAULT_CONCURRENCY, DEFAULT_BATCH_SIZE, DEFAULT_LEASE, RetryBackoff.DEFAULT);
    }

    public QueueOptions withConcurrency(int concurrency) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    public QueueOptions withBatchSize(int batchSize) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    public QueueOptions withLease(Duration lease) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    public QueueOptions withBackoff(RetryBackoff backoff) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /** Handlers running longer than {@code timeout} are interrupted and their attempt fails. */
    public QueueOptions withTimeout(Duration timeout) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /**
     * A job whose lease expires {@code maxLeaseExpiries} times is dead ("lease expired N times"),
     * and expiries stop spending its attempts; zero removes the limit.
     */
    public QueueOptions withMaxLeaseExpiries(int maxLeaseExpiries) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /** Guards the queue with a circuit breaker shared by every node; {@code null} for none. */
    public QueueOptions withBreaker(BreakerOptions breaker) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /** Runs jobs with one partition key one at a time, in enqueue order; {@link KeyOrdering#NONE} for none. */
    public QueueOptions withOrdering(KeyOrdering ordering) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /** Shares the queue's work among fairness keys; {@link FairnessOptions#NONE} for none. */
    public QueueOptions withFairness(FairnessOptions fairness) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /**
     * Claims up to {@code prefetch} jobs ahead of free handler slots; zero for none,
     * {@link #ADAPTIVE_PREFETCH} to let the runtime size it.
     */
    public QueueOptions withPrefetch(int prefetch) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /** A job whose enqueue names no attempts gets {@code maxAttempts}. */
    public QueueOptions withMaxAttempts(int maxAttempts) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /**
     * At most {@code globalConcurrency} of the queue's jobs running at once across every node (0: no
     * cap): each node starts them within its share of the cap.
     */
    public QueueOptions withGlobalConcurrency(int globalConcurrency) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /**
     * At most {@code keyConcurrency} jobs of one partition key claimed at once across every node (0:
     * no cap); claims then take no prefetch.
     */
    public QueueOptions withKeyConcurrency(int keyConcurrency) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /** A job may snooze {@code maxSnoozes} times; its next snooze counts as a failed attempt. */
    public QueueOptions withMaxSnoozes(int maxSnoozes) {
        return new QueueOptions(concurrency, batchSize, lease, backoff, timeout, maxLeaseExpiries, breaker, ordering,
                fairness, prefetch, maxAttempts, maxSnoozes, globalConcurrency, keyConcurrency);
    }

    /**
     * Whether the runtime sizes this queue's prefetch: asked for, and no breaker or burst/spaced
     * fairness whose limits count claims (there it stays at zero).
     */
    public boolean adaptsPrefetch() {
        return prefetch == ADAPTIVE_PREFETCH && !limitsCountClaims();
    }

    /** The most jobs this queue's poller may hold beyond its handler slots. */
    public int mostPrefetched() {
        if (prefetch != ADAPTIVE_PREFETCH) {
            return prefetch;
        }
        return adaptsPrefetch() ? (int) Math.min(Integer.MAX_VALUE / 2, 2L * batchSize) : 0;
    }

    private boolean limitsCountClaims() {
        return breaker != null || (fairness.fair() && fairness.mode() != FairnessMode.WEIGHTED) || keyConcurrency > 0;
    }

    /** How the sweeper recovers {@code queue}'s jobs under these options: its backoff and max-lease-expiries. */
    public RecoveryRule recoveryRule(String queue) {
        return new RecoveryRule(queue, backoff.initial().toMillis(), backoff.multiplier(), backoff.max().toMillis(),
                backoff.jitter(), maxLeaseExpiries, maxAttempts);
    }
}

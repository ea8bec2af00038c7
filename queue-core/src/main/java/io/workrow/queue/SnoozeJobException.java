package io.workrow.queue;

import java.time.Duration;

/**
 * Thrown by a handler to put its job back for {@code delay} without spending an attempt: for work
 * that is not ready yet (a partner's file not uploaded, a rate limit's window full). The attempt
 * that snoozed is given back, and the job's snoozes are counted instead (on its row, as
 * {@code snoozes}). The history logs the attempt as {@code snoozed}, with this exception's message
 * as its error; the job's {@code last_error} stays what it was. The meter
 * {@code workrow.jobs.snoozed} counts snoozes. A job may snooze
 * {@code workrow.queues.<queue>.max-snoozes} times (default 100); the next snooze fails its attempt
 * like an error, retried by the backoff or dead when its attempts are spent.
 *
 * <pre>{@code
 * if (!partner.fileReady(order)) {
 *     throw new SnoozeJobException(Duration.ofMinutes(5));
 * }
 * if (response.statusCode() == 429) {
 *     // every node stops calling the partner until Retry-After
 *     throw new SnoozeJobException(retryAfter(response)).wholeQueue();
 * }
 * }</pre>
 */
public class SnoozeJobException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * The longest snooze: a year. Work that should never run again is discarded
     * ({@link DiscardJobException}) or cancelled, not snoozed.
     */
    public static final Duration MAX_DELAY = Duration.ofDays(365);

    /** What a snooze puts aside: its own job, or with it its whole queue or partition key. */
    public enum Scope {
        /** This job only. */
        JOB,
        /** Every job of the queue, on every node ({@link #wholeQueue()}). */
        QUEUE,
        /** Every job of the job's partition key, on every node ({@link #wholeKey()}). */
        KEY
    }

    private final transient Duration delay;
    private final Scope scope;

    /** Runs the job again no earlier than {@code delay} from now (zero: as soon as a worker is free). */
    public SnoozeJobException(Duration delay) {
        this(checked(delay), Scope.JOB);
    }

    private SnoozeJobException(Duration delay, Scope scope) {
        super(scope == Scope.JOB ? "snoozed for " + delay
                : "snoozed for " + delay + " with its whole " + scope.name().toLowerCase(java.util.Locale.ROOT));
        this.delay = delay;
        this.scope = scope;
    }

    /**
     * The snooze holds the job's whole queue for its delay, cluster-wide: no node claims the queue's
     * jobs until then (a partner answered 429 with {@code Retry-After}), without opening the
     * circuit breaker. A longer hold already set is kept. Shown by {@code QueueAdmin.holds()}, the
     * endpoint and the dashboard, with its end time; {@code QueueAdmin.releaseHold} ends it early.
     */
    public SnoozeJobException wholeQueue() {
        return new SnoozeJobException(delay, Scope.QUEUE);
    }

    /**
     * The snooze holds every job of the job's partition key for its delay, cluster-wide: no node
     * claims the key's jobs until then, while the queue's other keys run on. A job without a
     * partition key snoozes alone (a warning says so).
     */
    public SnoozeJobException wholeKey() {
        return new SnoozeJobException(delay, Scope.KEY);
    }

    /** The wait before the job runs again. */
    public Duration delay() {
        return delay;
    }

    /** What the snooze puts aside. */
    public Scope scope() {
        return scope;
    }

    private static Duration checked(Duration delay) {
        if (delay == null || delay.isNegative()) {
            throw new IllegalArgumentException("a snooze's delay must not be negative, was " + delay);
        }
        if (delay.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("a snooze's delay must be at most " + MAX_DELAY + " (a year), was "
                    + delay + "; discard or cancel work that should not run again");
        }
        return delay;
    }
}

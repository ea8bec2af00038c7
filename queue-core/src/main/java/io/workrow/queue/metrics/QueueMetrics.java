package io.workrow.queue.metrics;

import io.workrow.queue.BreakerStatus;
import java.time.Duration;

/**
 * What the engine reports, counted where each event happens so the counts add up: a claim when
 * claimed, an outcome when it is recorded, a stale recovery when the sweeper moves the row, a
 * retirement when a job becomes dead. Every method defaults to doing nothing; {@link #NOOP} is
 * what runs without Micrometer.
 */
public interface QueueMetrics {

    /** Reports nothing. */
    QueueMetrics NOOP = new QueueMetrics() {
    };

    /**
     * A runtime starts working {@code queue}: its meters should exist from now on, at zero, so a
     * rate or an alert on them has a series before the first event.
     */
    default void register(String queue) {
    }

    /**
     * This runtime works {@code queue} with {@code slots} handler slots (its concurrency), or, with
     * 0, no longer works it: summed over the nodes, whether any node handles the queue at all.
     */
    default void handlers(String queue, int slots) {
    }

    /**
     * {@code queue} has a circuit breaker: its transition counters should exist from now on, at
     * zero, so an alert on the breaker opening has a series before the first opening.
     */
    default void registerBreaker(String queue) {
    }

    /** {@code count} jobs of {@code queue} were claimed by one statement. */
    default void claimed(String queue, int count) {
    }

    /**
     * A handler run of {@code queue} ended with {@code outcome} after {@code handlerTime}; a
     * {@link JobOutcome#SUCCESS} counts as processed, {@link JobOutcome#FAILURE} and
     * {@link JobOutcome#DISCARDED} as failed, {@link JobOutcome#SNOOZED} as snoozed and
     * {@link JobOutcome#EXPIRED} as expired.
     */
    default void handled(String queue, JobOutcome outcome, Duration handlerTime) {
    }

    /** A job of {@code queue} whose payload could not be read was sent to dead (no handler ran). */
    default void unreadable(String queue) {
    }

    /**
     * A handler ignored the interrupt past its timeout plus its lease, or outlived shutdown: its
     * lease was let go while it still ran.
     */
    default void abandoned(String queue) {
    }

    /** The sweeper recovered a job of {@code queue} whose lease had expired. */
    default void staleRecovered(String queue) {
    }

    /**
     * A job of {@code queue} that nobody started by its deadline was cancelled where it waited, by
     * the sweep rather than by a worker: counted with {@link JobOutcome#EXPIRED} outcomes.
     */
    default void expired(String queue) {
    }

    /** A job of {@code queue} moved to dead: out of attempts, discarded, or unreadable. */
    default void retired(String queue) {
    }

    /**
     * The circuit breaker of {@code queue} moved to {@code state}; counted once in the cluster, by
     * the node whose statement made the change.
     */
    default void breakerTransition(String queue, BreakerStatus.State state) {
    }
}

package io.workrow.queue.store;

/**
 * One queue's retry backoff in the form the sweep statement takes: {@code initial * multiplier^(attempt-1)}
 * milliseconds, capped at {@code max}, spread by up to {@code ±jitter}.
 *
 * @param queue the queue, or {@code null} for the default of queues not named
 */
public record BackoffRule(String queue, long initialMillis, double multiplier, long maxMillis, double jitter) {
}

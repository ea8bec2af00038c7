package io.workrow.queue.store;

/**
 * How one queue recovers a job whose lease expired, in the form the sweep statement takes: wait
 * {@code initial * multiplier^(attempt-1)} milliseconds, capped at {@code max}, spread by up to
 * {@code ±jitter}; and with {@code maxLeaseExpiries} above zero, retire the job once its lease has
 * expired that many times, without spending its attempts on expiries.
 *
 * @param queue the queue, or {@code null} for the default of queues not named
 */
public record RecoveryRule(String queue, long initialMillis, double multiplier, long maxMillis, double jitter,
        int maxLeaseExpiries) {
}

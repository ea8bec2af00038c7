package io.workrow.queue.worker;

import java.time.Duration;

/**
 * A queue's circuit breaker. {@code failureThreshold} consecutive failed attempts open it: no node
 * claims the queue's jobs, so none spends an attempt against a dependency that is down. After
 * {@code cooldown} it is half-open and lets {@code halfOpenProbes} jobs through: a success closes
 * it, a failure opens it for another cooldown. Its state lives in {@code workrow_breaker}, so every
 * node sees it and it survives restarts.
 */
public record BreakerOptions(int failureThreshold, Duration cooldown, int halfOpenProbes) {

    /** Default consecutive failures that open a breaker. */
    public static final int DEFAULT_FAILURE_THRESHOLD = 5;
    /** Default time a breaker stays open before it lets probes through. */
    public static final Duration DEFAULT_COOLDOWN = Duration.ofSeconds(30);
    /** Default probes let through while half-open. */
    public static final int DEFAULT_HALF_OPEN_PROBES = 1;

    public BreakerOptions {
        Settings.requireAtLeast("breaker.failure-threshold", 1, failureThreshold);
        Settings.requirePositive("breaker.cooldown", cooldown);
        Settings.requireAtLeast("breaker.half-open-probes", 1, halfOpenProbes);
    }

    /** Opens after 5 consecutive failures, cools down for 30 s, then lets one probe through. */
    public static BreakerOptions defaults() {
        return new BreakerOptions(DEFAULT_FAILURE_THRESHOLD, DEFAULT_COOLDOWN, DEFAULT_HALF_OPEN_PROBES);
    }
}

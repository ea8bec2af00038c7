package io.workrow.queue.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long a failed job waits before its next attempt: {@code initial * multiplier^(attempt-1)},
 * capped at {@code max}, then spread by up to {@code ±jitter} of itself so that jobs that failed
 * together do not all return together. The delay becomes the job's new {@code run_at}.
 */
public record RetryBackoff(Duration initial, double multiplier, Duration max, double jitter) {

    /** 1s, doubling, at most 1h, ±20%. */
    public static final RetryBackoff DEFAULT =
            new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0.2);

    public RetryBackoff {
        Settings.requirePositive("backoff.initial", initial);
        Settings.requirePositive("backoff.max", max);
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("backoff.multiplier must be at least 1.0, was " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("backoff.jitter must be between 0.0 and 1.0, was " + jitter);
        }
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff.max must not be below backoff.initial (" + initial
                    + "), was " + max);
        }
    }

    /** The wait after attempt number {@code failedAttempt} (counting from 1) failed. */
    public Duration delayAfter(int failedAttempt) {
        double exponential = initial.toMillis() * Math.pow(multiplier, Math.max(0, failedAttempt - 1));
        double capped = Math.min(exponential, max.toMillis());
        double spread = jitter == 0.0 ? 0.0 : ThreadLocalRandom.current().nextDouble(-jitter, jitter);
        long millis = Math.round(capped * (1.0 + spread));
        return Duration.ofMillis(Math.max(0, Math.min(millis, max.toMillis())));
    }
}

package io.workrow.queue;

import java.time.Instant;
import java.util.Locale;

/**
 * A queue's circuit breaker as every node sees it (a row of {@code workrow_breaker}).
 *
 * @param failures consecutive failed attempts counted while closed
 * @param openUntil open: when probes may start ({@code null} when opened by hand, until closed by
 *     hand); half-open: when probes that gave no verdict are given up; closed: {@code null}
 * @param changedAt when it last changed state
 * @param reason why it last changed state
 */
public record BreakerStatus(String queue, State state, int failures, Instant openUntil, Instant changedAt,
        String reason) {

    /** The states of a breaker. */
    public enum State {
        /** Jobs are claimed; consecutive failures are counted. */
        CLOSED,
        /** No node claims the queue's jobs. */
        OPEN,
        /** A few probes are let through; their outcome closes or reopens it. */
        HALF_OPEN;

        /** The value in {@code workrow_breaker.state}. */
        public String columnValue() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static State fromColumn(String value) {
            return valueOf(value.toUpperCase(Locale.ROOT));
        }
    }
}

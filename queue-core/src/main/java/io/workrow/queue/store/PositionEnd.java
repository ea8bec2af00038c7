package io.workrow.queue.store;

import java.time.Duration;

/**
 * How one claimed position ended, with what the end statement needs from the claim so that it
 * never reads the claim row's arrays.
 *
 * @param retryDelay how long a failed job waits before it is due again (zero: at once)
 */
public record PositionEnd(long token, int position, long id, int attempt, int maxAttempts, int expiries, Kind kind,
        String error, Duration retryDelay) {

    /** The ways a handler's run ends. */
    public enum Kind {
        /** The handler returned: the job is completed. */
        COMPLETED,
        /** The handler threw: retried after {@code retryDelay}, or dead on its last attempt. */
        FAILED,
        /** The handler gave up on the job: dead at once. */
        DISCARDED,
        /** Handed back at shutdown before its handler started: ready again, its attempt given back. */
        RELEASED,
        /** Interrupted by shutdown: ready again with its attempt spent, or dead on its last attempt. */
        INTERRUPTED;

        String columnValue() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public static PositionEnd completed(ClaimedPosition job) {
        return of(job, Kind.COMPLETED, null, Duration.ZERO);
    }

    public static PositionEnd failed(ClaimedPosition job, String error, Duration retryDelay) {
        return of(job, Kind.FAILED, error, retryDelay);
    }

    public static PositionEnd discarded(ClaimedPosition job, String error) {
        return of(job, Kind.DISCARDED, error, Duration.ZERO);
    }

    public static PositionEnd released(ClaimedPosition job) {
        return of(job, Kind.RELEASED, null, Duration.ZERO);
    }

    public static PositionEnd interrupted(ClaimedPosition job) {
        return of(job, Kind.INTERRUPTED, null, Duration.ZERO);
    }

    private static PositionEnd of(ClaimedPosition job, Kind kind, String error, Duration retryDelay) {
        return new PositionEnd(job.token(), job.position(), job.id(), job.attempt(), job.maxAttempts(),
                job.expiries(), kind, error, retryDelay);
    }
}

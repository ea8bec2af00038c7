package io.workrow.queue.store;

import java.time.Duration;
import java.time.Instant;

/**
 * How one claimed position ended, with what the end statement needs from the claim so that it
 * never reads the claim row's arrays (a claim of hundreds of jobs is stored compressed, and each
 * element read would unpack it again).
 *
 * @param retryDelay how long a failed job waits before it is due again (zero: at once)
 * @param maxLeaseExpiries for {@link Kind#EXPIRED}: the queue's {@code max-lease-expiries} (0: none)
 * @param runAt the due time the job was claimed at, which its outcome row keeps
 * @param lastError the job's last error before this attempt, which a completion keeps
 * @param lastErrorAt when that error happened
 * @param resultJson for {@link Kind#COMPLETED}, the handler's result as JSON ({@code null}: none)
 * @param waitedOn the claim said others wait for the job, or it is a batch member: the end takes
 *     the settling path at once
 * @param batchId the batch the job belongs to, as the claim read it, or {@code null}
 */
public record PositionEnd(long token, int position, long id, int attempt, int maxAttempts, int expiries, Kind kind,
        String error, Duration retryDelay, int maxLeaseExpiries, Instant runAt, String lastError,
        Instant lastErrorAt, String resultJson, boolean waitedOn, Long batchId) {

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
        INTERRUPTED,
        /**
         * Let go past its queue's timeout: its lease counted as expired, recovered after
         * {@code retryDelay} by the queue's rule, as the sweeper recovers a lost lease.
         */
        EXPIRED;

        String columnValue() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public static PositionEnd completed(ClaimedPosition job) {
        return completed(job, null);
    }

    /** Completed with the handler's result, as JSON ({@code null}: none). */
    public static PositionEnd completed(ClaimedPosition job, String resultJson) {
        return new PositionEnd(job.token(), job.position(), job.id(), job.attempt(), job.maxAttempts(),
                job.expiries(), Kind.COMPLETED, null, Duration.ZERO, 0, job.runAt(), job.lastError(),
                job.lastErrorAt(), resultJson, job.waitedOn(), job.batchId());
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

    /** A handler let go past its timeout, recovered after {@code backoff} (see {@link Kind#EXPIRED}). */
    public static PositionEnd expired(ClaimedPosition job, Duration backoff, int maxLeaseExpiries) {
        return new PositionEnd(job.token(), job.position(), job.id(), job.attempt(), job.maxAttempts(),
                job.expiries(), Kind.EXPIRED, null, backoff, maxLeaseExpiries, job.runAt(), job.lastError(),
                job.lastErrorAt(), null, job.waitedOn(), job.batchId());
    }

    private static PositionEnd of(ClaimedPosition job, Kind kind, String error, Duration retryDelay) {
        return new PositionEnd(job.token(), job.position(), job.id(), job.attempt(), job.maxAttempts(),
                job.expiries(), kind, error, retryDelay, 0, job.runAt(), job.lastError(), job.lastErrorAt(),
                null, job.waitedOn(), job.batchId());
    }
}

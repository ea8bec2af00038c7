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
 * @param snoozes how often the job had snoozed before this attempt, which a move back to ready or
 *     scheduled keeps (one more after a snooze)
 */
public record PositionEnd(long token, int position, long id, int attempt, int maxAttempts, int expiries, Kind kind,
        String error, Duration retryDelay, int maxLeaseExpiries, Instant runAt, String lastError,
        Instant lastErrorAt, String resultJson, boolean waitedOn, Long batchId, int snoozes) {

    /** An end of a job that never snoozed. */
    public PositionEnd(long token, int position, long id, int attempt, int maxAttempts, int expiries, Kind kind,
            String error, Duration retryDelay, int maxLeaseExpiries, Instant runAt, String lastError,
            Instant lastErrorAt, String resultJson, boolean waitedOn, Long batchId) {
        this(token, position, id, attempt, maxAttempts, expiries, kind, error, retryDelay, maxLeaseExpiries, runAt,
                lastError, lastErrorAt, resultJson, waitedOn, batchId, 0);
    }

    /** The ways a handler's run ends. */
    public enum Kind {
        /** The handler returned: the job is completed. */
        COMPLETED,
        /** The handler threw: retried after {@code retryDelay}, or dead on its last attempt. */
        FAILED,
        /** The handler gave up on the job: dead at once. */
        DISCARDED,
        /**
         * Handed back before its handler started (at shutdown, or by a node whose share of a
         * cluster-wide cap gives it no slot): ready again, its attempt given back.
         */
        RELEASED,
        /** Interrupted by shutdown: ready again with its attempt spent, or dead on its last attempt. */
        INTERRUPTED,
        /**
         * Let go past its queue's timeout: its lease counted as expired, recovered after
         * {@code retryDelay} by the queue's rule, as the sweeper recovers a lost lease.
         */
        EXPIRED,
        /**
         * The handler asked to run again after {@code retryDelay} without spending an attempt
         * ({@code SnoozeJobException}): its attempt is given back and its snoozes counted; logged
         * {@code snoozed}.
         */
        SNOOZED,
        /**
         * Reached its worker at or past its deadline ({@code JobRequest.expiresAt}): cancelled unstarted
         * with {@code error} as the reason, its attempt given back.
         */
        PAST_DEADLINE;

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
                job.lastErrorAt(), resultJson, job.waitedOn(), job.batchId(), job.snoozes());
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

    /** Snoozed for {@code delay}, {@code note} logged as the attempt's error (see {@link Kind#SNOOZED}). */
    public static PositionEnd snoozed(ClaimedPosition job, String note, Duration delay) {
        return of(job, Kind.SNOOZED, note, delay);
    }

    /** Cancelled unstarted past its deadline, {@code reason} its error (see {@link Kind#PAST_DEADLINE}). */
    public static PositionEnd pastDeadline(ClaimedPosition job, String reason) {
        return of(job, Kind.PAST_DEADLINE, reason, Duration.ZERO);
    }

    public static PositionEnd interrupted(ClaimedPosition job) {
        return of(job, Kind.INTERRUPTED, null, Duration.ZERO);
    }

    /** A handler let go past its timeout, recovered after {@code backoff} (see {@link Kind#EXPIRED}). */
    public static PositionEnd expired(ClaimedPosition job, Duration backoff, int maxLeaseExpiries) {
        return new PositionEnd(job.token(), job.position(), job.id(), job.attempt(), job.maxAttempts(),
                job.expiries(), Kind.EXPIRED, null, backoff, maxLeaseExpiries, job.runAt(), job.lastError(),
                job.lastErrorAt(), null, job.waitedOn(), job.batchId(), job.snoozes());
    }

    private static PositionEnd of(ClaimedPosition job, Kind kind, String error, Duration retryDelay) {
        return new PositionEnd(job.token(), job.position(), job.id(), job.attempt(), job.maxAttempts(),
                job.expiries(), kind, error, retryDelay, 0, job.runAt(), job.lastError(), job.lastErrorAt(),
                null, job.waitedOn(), job.batchId(), job.snoozes());
    }
}

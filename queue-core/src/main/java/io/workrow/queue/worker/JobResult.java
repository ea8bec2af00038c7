package io.workrow.queue.worker;

import java.time.Duration;

/**
 * What became of one handler run, as the executor classified it: what the {@link ResultWriter}
 * is to record. The executor decides; only the writer writes.
 *
 * @param error the text for {@code last_error} (failures, discards), else {@code null}
 * @param retryDelay the wait before the next attempt (failures), else zero
 * @param handlerTime how long the handler ran (zero when it never ran)
 * @param cause the handler's exception, for the log line, or {@code null}
 * @param resultJson for {@link Kind#COMPLETE}, the handler's result as JSON, or {@code null}: none
 */
record JobResult(RunningJob job, Kind kind, String error, Duration retryDelay, Duration handlerTime,
        Throwable cause, String resultJson) {

    enum Kind {
        /** The handler returned: complete the job. */
        COMPLETE,
        /** A transactional handler returned and its transaction committed the completion. */
        COMPLETED_IN_TRANSACTION,
        /** The handler threw (or timed out): retry after the delay, or dead when out of attempts. */
        FAIL,
        /** The handler threw {@code DiscardJobException}: dead at once. */
        DISCARD,
        /** The payload could not be read as the handler's type: dead at once, no handler ran. */
        UNREADABLE,
        /** Interrupted by shutdown: back to pending, the attempt counted. */
        RELEASE,
        /**
         * Claimed but never started, handed back at shutdown or by a node whose share of a
         * cluster-wide cap gives it no slot: back to pending, the attempt given back.
         */
        RELEASE_UNSTARTED,
        /** The handler threw {@code SnoozeJobException}: run again after the delay, no attempt spent. */
        SNOOZE,
        /** Reached its handler slot at or past its deadline: cancelled unstarted ("expired: ..."). */
        PAST_DEADLINE,
        /** The lease was lost or the job cancelled while it ran: nothing is ours to write. */
        ABANDON,
        /**
         * The handler ignored its interrupt one lease past its timeout and is let go: its position
         * ends as an expired lease, recovered by its queue's rule as the sweeper would, while its
         * claim's other jobs keep their lease. The handler's own result, when it comes, is refused.
         */
        LET_GO
    }

    static JobResult of(RunningJob job, Kind kind, Duration handlerTime) {
        return new JobResult(job, kind, null, Duration.ZERO, handlerTime, null, null);
    }

    /** {@link Kind#COMPLETE} with the handler's result ({@code null}: none). */
    static JobResult completed(RunningJob job, String resultJson, Duration handlerTime) {
        return new JobResult(job, Kind.COMPLETE, null, Duration.ZERO, handlerTime, null, resultJson);
    }

    /** {@link Kind#LET_GO}: due again after the backoff the sweeper would give its expired lease. */
    static JobResult letGo(RunningJob job) {
        QueueOptions options = job.registration().options();
        Duration backoff = options.maxLeaseExpiries() > 0
                ? options.backoff().delayAfter(job.job().expiries() + 1)
                : options.backoff().delayAfter(job.job().attempt());
        return new JobResult(job, Kind.LET_GO, null, backoff, job.runningFor(), null, null);
    }

    static JobResult failed(RunningJob job, Kind kind, String error, Duration retryDelay, Duration handlerTime,
            Throwable cause) {
        return new JobResult(job, kind, error, retryDelay, handlerTime, cause, null);
    }
}

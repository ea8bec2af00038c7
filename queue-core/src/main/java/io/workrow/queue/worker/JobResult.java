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
 */
record JobResult(RunningJob job, Kind kind, String error, Duration retryDelay, Duration handlerTime,
        Throwable cause) {

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
        /** Claimed but never started before shutdown: back to pending, the attempt given back. */
        RELEASE_UNSTARTED,
        /** The lease was lost or the job cancelled while it ran: nothing is ours to write. */
        ABANDON
    }

    static JobResult of(RunningJob job, Kind kind, Duration handlerTime) {
        return new JobResult(job, kind, null, Duration.ZERO, handlerTime, null);
    }

    static JobResult failed(RunningJob job, Kind kind, String error, Duration retryDelay, Duration handlerTime,
            Throwable cause) {
        return new JobResult(job, kind, error, retryDelay, handlerTime, cause);
    }
}

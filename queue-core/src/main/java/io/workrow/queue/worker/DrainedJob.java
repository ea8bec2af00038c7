package io.workrow.queue.worker;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.JobOutcome;

/**
 * One job a {@link WorkerRuntime#drain(String) drain} ran, as its outcome was recorded.
 *
 * @param attempt the attempt this run was (1 for the first)
 * @param outcome how the run ended: {@code SUCCESS}, {@code FAILURE} (retried later, or dead when
 *     its attempts are spent), {@code DISCARDED} (dead: the handler discarded it, or its payload
 *     could not be read), and rarely {@code LEASE_LOST} or {@code CANCELLED}
 * @param status the job's status once the outcome was recorded ({@code completed}, {@code scheduled}
 *     for a retry after its backoff, {@code dead}); {@code null} when nothing was recorded
 * @param error what was written to {@code last_error}, or {@code null}
 * @param cause the exception the handler threw (or the payload's decoding error), or {@code null}
 */
public record DrainedJob(long id, String queue, int attempt, JobOutcome outcome, JobStatus status, String error,
        Throwable cause) {

    /** Whether the handler returned and the job is completed. */
    public boolean succeeded() {
        return outcome == JobOutcome.SUCCESS;
    }

    @Override
    public String toString() {
        return "job=" + id + " queue=" + queue + " attempt=" + attempt + " " + outcome.tagValue()
                + (status != null ? " -> " + status.columnValue() : "") + (error != null ? " (" + error + ")" : "");
    }
}

package io.workrow.queue.worker;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.JobOutcome;

/**
 * What the {@link ResultWriter} recorded for one result: the outcome, the job's status after it
 * ({@code null} when nothing was written: the lease was lost, the job cancelled, or the runtime
 * stopped before the write), and the result it recorded.
 */
record RecordedOutcome(JobOutcome outcome, JobStatus status, JobResult result) {
}

package io.workrow.queue;

import java.util.Collection;

/**
 * Jobs enqueued together as a batch, with callbacks that run once when the batch is done: after
 * every member has ended, exactly once cluster-wide however many nodes end its last members at
 * the same moment. Built by {@link JobQueue#batch()}; nothing is written until {@link #enqueue()},
 * which writes the whole batch in one transaction (the caller's when there is one).
 *
 * <pre>{@code
 * BatchReceipt batch = jobQueue.batch()
 *         .addAll(mails)
 *         .onSuccess(JobRequest.of("campaign-sent", campaignId))     // every member completed
 *         .onFinish(JobRequest.of("campaign-report", campaignId))    // every member ended, however
 *         .enqueue();
 * }</pre>
 *
 * <p>A batch is one row of counters, not a row per member: a batch of 100,000 jobs costs its
 * callbacks nothing per member. A member whose idempotency key already exists is not enqueued and
 * is not a member. Callbacks are jobs too ({@code waiting} until the batch is done), and know
 * their batch from {@link JobContext#batchId()}; they cannot wait for other jobs themselves. A
 * callback's {@code delay} or {@code runAt}, like a dependent's, counts from the enqueue, not from
 * the batch's end: released earlier than that, it waits as {@code scheduled}.
 */
public interface JobBatch {

    /** Adds a member. */
    JobBatch add(JobRequest member);

    /** Adds members, in order. */
    JobBatch addAll(Collection<JobRequest> members);

    /**
     * The job to run once every member has completed; if a member ends dead or cancelled instead,
     * it is cancelled with a last error that counts them. At most one.
     */
    JobBatch onSuccess(JobRequest callback);

    /** The job to run once every member has ended, however. At most one. */
    JobBatch onFinish(JobRequest callback);

    /** Enqueues the members and callbacks; returns the batch's id and the members' ids in order. */
    BatchReceipt enqueue();
}

package io.workrow.queue;

/**
 * How long an idempotency key keeps a second enqueue from making a second job
 * ({@link JobRequest#idempotencyKey(String, KeyScope)}). The enqueue's own scope decides, against
 * the job that has the key now: producers of one key should use one scope.
 */
public enum KeyScope {
    /**
     * While the job has never started (pending, scheduled or waiting for other jobs, with no attempt
     * made): once it runs, the key makes a new job, and a retry of the started job later (a
     * failure, a snooze, a lost lease) does not take the key back. For "at most one queued refresh
     * of this account".
     */
    WHILE_WAITING,
    /**
     * While the job has not ended (also while it runs and while it waits for a retry): once it
     * completed, died or was cancelled, the key makes a new job. For "one sync of this account in
     * queue or running" (a handler interrupted by a cancel, or retrying a dead job by hand, can
     * still overlap the next).
     */
    WHILE_ACTIVE,
    /**
     * As long as the job is kept, finished or not, until retention removes its history: the
     * default, for "this receipt is sent once".
     */
    WHILE_RETAINED
}

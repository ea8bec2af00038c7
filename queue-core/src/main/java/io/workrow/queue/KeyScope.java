package io.workrow.queue;

/**
 * How long an idempotency key keeps a second enqueue from making a second job
 * ({@link JobRequest#idempotencyKey(String, KeyScope)}). The enqueue's own scope decides, against
 * the job that has the key now: producers of one key should use one scope.
 */
public enum KeyScope {
    /**
     * While the job has not started (pending, scheduled or waiting for other jobs): once it runs, or
     * has ended, the key makes a new job. For "at most one queued refresh of this account".
     */
    WHILE_WAITING,
    /**
     * While the job has not ended (also while it runs): once it completed, died or was cancelled,
     * the key makes a new job. For "never two syncs of this account at once, in queue or running".
     */
    WHILE_ACTIVE,
    /**
     * As long as the job is kept, finished or not, until retention removes its history: the
     * default, for "this receipt is sent once".
     */
    WHILE_RETAINED
}

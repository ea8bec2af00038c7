package io.workrow.queue.worker;

/**
 * Whether a queue runs the jobs of one partition key one at a time, in enqueue ({@code id}) order,
 * and what a failing job does to the jobs behind it. Jobs without a partition key are not ordered:
 * any worker claims them, in parallel, as on a plain queue.
 */
public enum KeyOrdering {

    /** Not ordered: jobs are claimed by priority, due time and id, many of one key at once. */
    NONE,

    /**
     * Ordered; a failing job holds its key until it completes or is dead: no later job of the key
     * runs while an earlier one is waiting, scheduled or running.
     */
    BLOCK,

    /**
     * Ordered; a failing job steps aside while it waits for its retry, and the key goes on with its
     * next job. Once due again the failed job is the key's oldest and runs next. Jobs scheduled for
     * later do not hold the key either.
     */
    SKIP
}

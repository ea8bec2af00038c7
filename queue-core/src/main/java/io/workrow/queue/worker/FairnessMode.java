package io.workrow.queue.worker;

/**
 * How a fair queue shares its work among fairness keys (a job's fairness key, else its partition
 * key; jobs with neither form one group of their own, key {@code ""}). Within a key, jobs run in
 * claim order: priority, due time, id.
 */
public enum FairnessMode {

    /** Not fair: jobs are claimed by priority, due time and id, whatever their key. */
    NONE,

    /**
     * Keys share the queue's starts in proportion to their weights (default 1), however deep each
     * key's backlog: one tenant's 100,000 jobs do not hold back another's 10.
     */
    WEIGHTED,

    /**
     * Each key starts at most its rate per minute (the database's clock minute), in bursts: as many
     * as the rate allows as soon as the minute begins.
     */
    BURST,

    /** Each key starts one job per {@code 1 / rate}: evenly spread, never two closer than that. */
    SPACED
}

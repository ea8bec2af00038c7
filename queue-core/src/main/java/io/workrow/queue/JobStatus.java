package io.workrow.queue;

import java.util.Locale;

/**
 * Where a job is in its lifecycle; the value of the {@code status} column.
 *
 * <pre>
 * scheduled --due (promoted)--> pending --claim--> running --complete--> completed
 *                      |--fail, attempts left--> scheduled (run_at moved by the backoff)
 *                      |--fail, attempts spent, or discard--> dead
 *                      |--lease expired (sweeper)--> scheduled (after the backoff), or dead when spent
 *                      |--shutdown--> pending
 * scheduled/pending/running --cancel--> cancelled        dead --retry (operator)--> pending
 * waiting --last dependency ended--> pending (or scheduled, when it asked for a later time)
 * waiting --a dependency ended dead or cancelled (after), or cancel--> cancelled
 * </pre>
 */
public enum JobStatus {

    /**
     * Due later ({@code run_at} in the future: enqueued for later, or waiting out a retry's
     * backoff); made pending when it falls due. Kept out of the claim indexes so claims never read it.
     */
    SCHEDULED,
    /** Due, waiting to be claimed. */
    PENDING,
    /**
     * Waiting for other jobs to end ({@code JobRequest.after}, {@code afterSettled}): not
     * claimable, and in no claim index; made pending by the end of its last dependency.
     */
    WAITING,
    /** Claimed by a worker that holds its lease. */
    RUNNING,
    /** Finished successfully. Terminal. */
    COMPLETED,
    /** Retired after its last attempt, or discarded: kept with its last error as a case file. */
    DEAD,
    /** Cancelled by an operator before it finished. Terminal. */
    CANCELLED;

    /** The value stored in the {@code status} column. */
    public String columnValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Reads a {@code status} column value. */
    public static JobStatus fromColumn(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }

    /** Whether the job will never run again unless an operator intervenes. */
    public boolean isFinished() {
        return this == COMPLETED || this == DEAD || this == CANCELLED;
    }
}

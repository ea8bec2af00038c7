package io.workrow.queue;

import java.util.Locale;

/**
 * Where a job is in its lifecycle; the value of the {@code status} column.
 *
 * <pre>
 * pending --claim--> running --complete--> completed
 *                      |--fail, attempts left--> pending (run_at moved by the backoff)
 *                      |--fail, attempts spent, or discard--> dead
 *                      |--lease expired (sweeper)--> pending, or dead when attempts are spent
 * pending/running --cancel--> cancelled        dead --retry (operator)--> pending
 * </pre>
 */
public enum JobStatus {

    /** Waiting to be claimed, possibly scheduled for later ({@code run_at} in the future). */
    PENDING,
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

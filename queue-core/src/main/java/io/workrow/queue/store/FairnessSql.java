package io.workrow.queue.store;

/**
 * The statements on fair queues' per-key settings and state, besides the fair claims themselves
 * ({@link JobSql#JOB_CLAIM_WEIGHTED}, {@link JobSql#JOB_CLAIM_BURST}, {@link JobSql#JOB_CLAIM_SPACED}),
 * which read both tables. Rendered by {@link JobSql#render}.
 */
final class FairnessSql {

    private FairnessSql() {
    }

    /** Sets a key's weight, rate or both; a null keeps what the key had (or the default). Returns the row. */
    static final String FAIRNESS_SET = """
            INSERT INTO {fairness_key} AS setting (queue, fairness_key, weight, rate_per_minute, updated_at)
            VALUES (?, ?, ?, ?, now())
            ON CONFLICT (queue, fairness_key) DO UPDATE
            SET weight = coalesce(excluded.weight, setting.weight),
                rate_per_minute = coalesce(excluded.rate_per_minute, setting.rate_per_minute),
                updated_at = now()
            RETURNING queue, fairness_key, weight, rate_per_minute, updated_at
            """;

    /**
     * The time until the earliest frontier of a spaced queue that is still ahead, in milliseconds,
     * or null when none is: when the queue's poller should look again.
     */
    static final String FAIRNESS_NEXT_SPACED_START = """
            SELECT extract(epoch FROM min(next_start_at) - now()) * 1000
            FROM {fairness_state}
            WHERE queue = ? AND next_start_at > now()
            """;

    /** Removes a key's setting, so it takes the defaults again. */
    static final String FAIRNESS_CLEAR = """
            DELETE FROM {fairness_key} WHERE queue = ? AND fairness_key = ?
            """;

    /** The settings of one queue, or of every queue when the queue is null. */
    static final String FAIRNESS_LIST = """
            SELECT queue, fairness_key, weight, rate_per_minute, updated_at
            FROM {fairness_key}
            WHERE ?::text IS NULL OR queue = ?
            ORDER BY queue, fairness_key
            LIMIT ?
            """;

    /**
     * Deletes state rows no claim has touched for the given time: keys whose backlog ended. Only
     * rows past any window or spacing they could still enforce are old enough (a rate is at least
     * one a minute, so nothing is enforced longer than a minute after the last start); a weighted
     * key that comes back starts level with the others, as a new one does. Rows a claim holds are
     * skipped.
     */
    static final String FAIRNESS_STATE_PRUNE = """
            WITH stale AS (
                SELECT queue, fairness_key
                FROM {fairness_state}
                WHERE touched_at < statement_timestamp() - ? * interval '1 millisecond'
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            )
            DELETE FROM {fairness_state} AS state
            USING stale
            WHERE state.queue = stale.queue AND state.fairness_key = stale.fairness_key
            """;
}

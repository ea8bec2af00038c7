package io.workrow.queue.store;

/**
 * The statements on {@code workrow_hold}, mirrored by {@link HoldStore}: a queue, or one partition
 * key of it, held cluster-wide until a time. Claims read the table themselves (JobSql's claim
 * statements and {@link StatementParts#QUEUE_OPEN}); these set, end and list the holds. Time is the
 * database's.
 */
final class HoldSql {

    private HoldSql() {
    }

    /**
     * Holds a queue ({@code scope} 'queue', key '') or one key of it ('key') for {@code ?}
     * milliseconds from now. An existing hold ends at the later of the two times, so a shorter
     * Retry-After never cuts a longer one short; holds already ended are deleted on the way.
     * Returns the hold as it now is.
     */
    static final String HOLD_SET = """
            WITH ended AS (
                DELETE FROM {hold} WHERE until <= now()
            )
            INSERT INTO {hold} AS hold (queue, scope, held_key, until, reason, held_by, held_at)
            VALUES (?, ?, ?, clock_timestamp() + ?::bigint * interval '1 millisecond', ?, ?, clock_timestamp())
            ON CONFLICT (queue, scope, held_key) DO UPDATE
            SET until = CASE WHEN hold.until > now() THEN greatest(hold.until, excluded.until) ELSE excluded.until END,
                reason = excluded.reason, held_by = excluded.held_by, held_at = excluded.held_at
            RETURNING queue, scope, held_key, until, reason, held_by, held_at
            """;

    /**
     * Ends a live hold of a queue or key before its time and wakes the queue's pollers at once;
     * returns it when there was one.
     */
    static final String HOLD_RELEASE = """
            WITH released AS (
                DELETE FROM {hold}
                WHERE queue = ? AND scope = ? AND held_key = ? AND until > now()
                RETURNING queue, scope, held_key, until, reason, held_by, held_at
            )
            SELECT released.*, pg_notify({channel}, released.queue) FROM released
            """;

    /** The live holds, by queue, the whole queue's first. */
    static final String HOLD_LIST = """
            SELECT queue, scope, held_key, until, reason, held_by, held_at
            FROM {hold}
            WHERE until > now()
            ORDER BY queue, scope DESC, held_key
            """;
}

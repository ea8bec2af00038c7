package io.workrow.queue.store;

/**
 * The recurring job statements ({@code workrow_recurring}, one row per declared entry), mirrored
 * by {@link RecurringStore}. Each reads its row by primary key. Ticks are computed by the nodes
 * from the entry's cron expression and zone; the row only records which tick was enqueued last.
 */
final class RecurringSql {

    private RecurringSql() {
    }

    /**
     * Declares an entry as this node's configuration has it (queue, cron, zone, next tick), keeping
     * the last tick enqueued; returns that last tick (null for an entry never run). When the cron
     * or zone differs from the row's, the last tick moves to {@code now} (the database's clock,
     * read by the caller): the old schedule's missed ticks are not the new one's to catch up, and
     * every node that declares after this one sees the same. The decision is made on the row as
     * locked by the upsert, so concurrent declarations agree.
     */
    static final String RECURRING_DECLARE = """
            INSERT INTO {recurring} AS entry (name, queue, cron, zone, next_tick) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE
                SET queue = EXCLUDED.queue, cron = EXCLUDED.cron, zone = EXCLUDED.zone,
                    next_tick = EXCLUDED.next_tick, declared_at = now(),
                    last_tick = CASE WHEN (entry.cron, entry.zone) IS DISTINCT FROM (EXCLUDED.cron, EXCLUDED.zone)
                                     THEN greatest(entry.last_tick, ?) ELSE entry.last_tick END
            RETURNING last_tick
            """;

    /** The database's clock, which decides when a tick is due on every node. */
    static final String RECURRING_NOW = """
            SELECT clock_timestamp()
            """;

    /**
     * Moves an entry's last tick forward to {@code tick} (and its next tick on), only if it was
     * behind: returns a row for the one session in the cluster that moved it, which enqueues the
     * tick's job in the same transaction. A node that lost the race, or tries a tick already done,
     * gets nothing and enqueues nothing.
     */
    static final String RECURRING_ADVANCE = """
            UPDATE {recurring}
            SET last_tick = ?, next_tick = ?
            WHERE name = ? AND (last_tick IS NULL OR last_tick < ?)
            RETURNING name
            """;

    /** Every declared entry, by name, with its last and next tick. */
    static final String RECURRING_LIST = """
            SELECT name, queue, cron, zone, last_tick, next_tick, declared_at
            FROM {recurring}
            ORDER BY name
            """;
}

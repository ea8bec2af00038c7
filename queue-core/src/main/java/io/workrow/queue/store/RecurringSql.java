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
     * the last tick enqueued; returns that last tick (null for an entry never run) with the cron
     * and zone the row had before (null for a new row), so a changed schedule is not caught up.
     * Every node declares its entries at start: the latest start's schedule is what the row shows.
     */
    static final String RECURRING_DECLARE = """
            WITH previous AS (
                SELECT cron, zone FROM {recurring} WHERE name = ?
            ), declared AS (
                INSERT INTO {recurring} (name, queue, cron, zone, next_tick) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE
                    SET queue = EXCLUDED.queue, cron = EXCLUDED.cron, zone = EXCLUDED.zone,
                        next_tick = EXCLUDED.next_tick, declared_at = now()
                RETURNING last_tick
            )
            SELECT declared.last_tick, previous.cron AS previous_cron, previous.zone AS previous_zone
            FROM declared LEFT JOIN previous ON true
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

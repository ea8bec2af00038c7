package io.workrow.queue.store;

/**
 * The statements on {@code workrow_queue_cap}, mirrored by {@link CapStore}: each queue's
 * cluster-wide and per-key concurrency caps, as configured and as set by hand, and the statements a
 * capped claim runs before the claim itself, in its transaction ({@link CappedClaim}).
 */
final class CapSql {

    private CapSql() {
    }

    /**
     * Declares the configured caps of many queues, cluster-wide and per key ({@code NULL}: none
     * configured), in queue order so that nodes starting at once wait for each other rather than
     * deadlock; returns, for each queue whose configured caps another worker had declared
     * differently, what it had.
     */
    static final String CAP_DECLARE = """
            WITH declared AS (
                SELECT * FROM unnest(?::text[], ?::int[], ?::int[]) AS declared(queue, configured, key_configured)
            ), previous AS (
                SELECT cap.queue, cap.configured, cap.key_configured, cap.declared_by
                FROM {queue_cap} AS cap
                JOIN declared ON declared.queue = cap.queue
                WHERE cap.declared_by IS DISTINCT FROM ?
                  AND (cap.configured IS DISTINCT FROM declared.configured
                       OR cap.key_configured IS DISTINCT FROM declared.key_configured)
            ), upserted AS (
                INSERT INTO {queue_cap} AS cap (queue, configured, key_configured, declared_by, changed_at)
                SELECT declared.queue, declared.configured, declared.key_configured, ?, now() FROM declared
                ORDER BY declared.queue
                ON CONFLICT (queue) DO UPDATE
                SET configured = excluded.configured, key_configured = excluded.key_configured,
                    declared_by = excluded.declared_by, changed_at = excluded.changed_at
            )
            SELECT queue, configured, key_configured, declared_by FROM previous ORDER BY queue
            """;

    /** Sets a queue's cluster-wide cap by hand (it wins over the configured one). */
    static final String CAP_SET = """
            INSERT INTO {queue_cap} AS cap (queue, set_by_hand, reason, changed_at)
            VALUES (?, ?, ?, now())
            ON CONFLICT (queue) DO UPDATE
            SET set_by_hand = excluded.set_by_hand, reason = excluded.reason, changed_at = excluded.changed_at
            """;

    /** Sets a queue's per-key cap by hand (it wins over the configured one). */
    static final String CAP_SET_KEY = """
            INSERT INTO {queue_cap} AS cap (queue, key_set_by_hand, key_reason, changed_at)
            VALUES (?, ?, ?, now())
            ON CONFLICT (queue) DO UPDATE
            SET key_set_by_hand = excluded.key_set_by_hand, key_reason = excluded.key_reason,
                changed_at = excluded.changed_at
            """;

    /** Clears a queue's cluster-wide cap set by hand, so its configured one applies again. */
    static final String CAP_CLEAR = """
            UPDATE {queue_cap}
            SET set_by_hand = NULL, reason = NULL, changed_at = now()
            WHERE queue = ? AND set_by_hand IS NOT NULL
            """;

    /** Clears a queue's per-key cap set by hand, so its configured one applies again. */
    static final String CAP_CLEAR_KEY = """
            UPDATE {queue_cap}
            SET key_set_by_hand = NULL, key_reason = NULL, changed_at = now()
            WHERE queue = ? AND key_set_by_hand IS NOT NULL
            """;

    /**
     * Every capped queue, with its jobs claimed now (open positions of its claim rows, on every
     * node). Claim rows are few (one per claimed batch in flight) and not indexed by queue.
     */
    static final String CAP_LIST = """
            SELECT cap.queue, cap.configured, cap.set_by_hand, cap.reason, cap.key_configured, cap.key_set_by_hand,
                   cap.key_reason,
                   coalesce((SELECT sum(length(replace((claim.settled | claim.dropped)::text, '1', '')))
                             FROM {claim} AS claim WHERE claim.queue = cap.queue), 0)::int AS running
            FROM {queue_cap} AS cap
            WHERE coalesce(cap.set_by_hand, cap.configured, cap.key_set_by_hand, cap.key_configured) IS NOT NULL
            ORDER BY cap.queue
            """;

    /** The queues with a cap in force, cluster-wide or per key: what every runtime looks at every two seconds. */
    static final String CAP_QUEUES = """
            SELECT queue FROM {queue_cap}
            WHERE coalesce(set_by_hand, configured, key_set_by_hand, key_configured) IS NOT NULL
            """;

    /**
     * A capped claim's first statement: locks the queue's cap row, so that the claims of one capped
     * queue take turns across nodes, and reads its caps in force, cluster-wide and per key. No row,
     * or neither cap: the queue is not capped.
     * In the same round trip it reads the transaction's isolation (the count that follows needs
     * READ COMMITTED) and turns on generic plans for the rest of the transaction, as a claim
     * outside one has them.
     */
    static final String CAP_LOCK = """
            SELECT coalesce(set_by_hand, configured) AS cap, coalesce(key_set_by_hand, key_configured) AS key_cap,
                   current_setting('transaction_isolation') AS isolation,
                   set_config('plan_cache_mode', 'force_generic_plan', true) AS plans
            FROM {queue_cap}
            WHERE queue = ?
            FOR NO KEY UPDATE
            """;

    /**
     * Makes sure a capped queue has its cap row, to be locked by {@link #CAP_LOCK}: a queue capped
     * per key only, whose runtimes could not declare it, still has its claims take turns.
     */
    static final String CAP_ENSURE = """
            INSERT INTO {queue_cap} (queue) VALUES (?)
            ON CONFLICT (queue) DO NOTHING
            """;

    /**
     * A capped claim's second statement, in a snapshot taken after the lock: the queue's open
     * positions on every node, which only claims raise (and they wait for the lock) while ends,
     * cancels and the sweeper lower, less those of the claiming node's jobs that have finished
     * running and wait for their end to be written (tokens and positions, as parallel arrays): a
     * slot is free once its handler has returned, not only once the writer's batch is committed.
     */
    static final String CAP_RUNNING = """
            SELECT (coalesce(sum(length(replace((claim.settled | claim.dropped)::text, '1', ''))), 0)
                    - (SELECT count(*)
                       FROM unnest(?::bigint[], ?::int[]) AS finished(token, position)
                       JOIN {claim} AS mine ON mine.token = finished.token
                       WHERE get_bit(mine.settled, finished.position - 1) = 0
                         AND get_bit(mine.dropped, finished.position - 1) = 0))::int
            FROM {claim} AS claim
            WHERE claim.queue = ?
            """;
}

package io.workrow.queue.store;

/**
 * The statements on {@code workrow_queue_cap} and {@code workrow_cap_share}, mirrored by
 * {@link CapStore}: each queue's cluster-wide and per-key concurrency caps, as configured and as set
 * by hand; the statements a key-capped claim runs before the claim itself, in its transaction
 * ({@link CappedClaim}); and the nodes' shares of the cluster-wide caps ({@link CapShares}).
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
                SELECT * FROM unnest(?::text[], ?::int[], ?::int[]) AS declared(queue, global_configured, key_configured)
            ), previous AS (
                SELECT cap.queue, cap.global_configured, cap.key_configured, cap.declared_by
                FROM {queue_cap} AS cap
                JOIN declared ON declared.queue = cap.queue
                WHERE cap.declared_by IS DISTINCT FROM ?
                  AND (cap.global_configured IS DISTINCT FROM declared.global_configured
                       OR cap.key_configured IS DISTINCT FROM declared.key_configured)
            ), upserted AS (
                INSERT INTO {queue_cap} AS cap (queue, global_configured, key_configured, declared_by, changed_at)
                SELECT declared.queue, declared.global_configured, declared.key_configured, ?, now() FROM declared
                ORDER BY declared.queue
                ON CONFLICT (queue) DO UPDATE
                SET global_configured = excluded.global_configured, key_configured = excluded.key_configured,
                    declared_by = excluded.declared_by, changed_at = excluded.changed_at
            )
            SELECT queue, global_configured AS configured, key_configured, declared_by FROM previous ORDER BY queue
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
            SELECT cap.queue, cap.global_configured AS configured, cap.set_by_hand, cap.reason, cap.key_configured, cap.key_set_by_hand,
                   cap.key_reason,
                   coalesce((SELECT sum(length(replace((claim.settled | claim.dropped)::text, '1', '')))
                             FROM {claim} AS claim WHERE claim.queue = cap.queue), 0)::int AS running
            FROM {queue_cap} AS cap
            WHERE coalesce(cap.set_by_hand, cap.global_configured, cap.key_set_by_hand, cap.key_configured) IS NOT NULL
            ORDER BY cap.queue
            """;

    /**
     * The queues with a cap in force, cluster-wide or per key, with which of the two they have:
     * what every runtime looks at every two seconds.
     */
    static final String CAP_QUEUES = """
            SELECT queue, coalesce(set_by_hand, global_configured) IS NOT NULL AS global,
                   coalesce(key_set_by_hand, key_configured) IS NOT NULL AS per_key
            FROM {queue_cap}
            WHERE coalesce(set_by_hand, global_configured, key_set_by_hand, key_configured) IS NOT NULL
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
            SELECT coalesce(set_by_hand, global_configured) AS cap, coalesce(key_set_by_hand, key_configured) AS key_cap,
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
     * A share's resize, second statement after {@link #CAP_LOCK}, in a snapshot taken after the
     * lock: the live shares of the queue (every node's, the resizing node's too). Only a resize,
     * under the same lock, raises a share, so the room these leave holds until it commits.
     */
    static final String CAP_SHARES = """
            SELECT worker, slots, wanted,
                   coalesce((extract(epoch FROM clock_timestamp() - waiting_since) * 1000)::bigint, 0) AS waited_ms
            FROM {cap_share}
            WHERE queue = ? AND expires_at > clock_timestamp()
            """;

    /**
     * A share's resize, last statement: the node's new share and want, counting for the given time
     * from now; a node that wants slots and holds none keeps the time it began waiting.
     */
    static final String CAP_SHARE_SET = """
            INSERT INTO {cap_share} AS share (queue, worker, slots, wanted, waiting_since, expires_at)
            VALUES (?, ?, ?, ?, NULL, clock_timestamp() + ? * interval '1 millisecond')
            ON CONFLICT (queue, worker) DO UPDATE
            SET slots = excluded.slots, wanted = excluded.wanted, expires_at = excluded.expires_at,
                waiting_since = CASE WHEN excluded.slots = 0 AND excluded.wanted > 0
                                     THEN coalesce(share.waiting_since, clock_timestamp()) END
            """;

    /** A share given back whole (the node wants nothing, or the queue has no cap any more). */
    static final String CAP_SHARE_DROP = """
            DELETE FROM {cap_share} WHERE queue = ? AND worker = ?
            """;

    /**
     * Pushes on, by one lease, every share of one node that still counts, with its lease renewals
     * (never earlier than it was: a share taken with a longer lease keeps it); returns their queues. A share that lapsed is not revived: the node must take it again under
     * the queue's lock, where the others' shares are read.
     */
    static final String CAP_SHARES_RENEW = """
            UPDATE {cap_share} SET expires_at = greatest(expires_at, clock_timestamp() + ? * interval '1 millisecond')
            WHERE worker = ? AND expires_at > clock_timestamp()
            RETURNING queue
            """;

    /** Shares of one node, given back as it stops. */
    static final String CAP_SHARES_DROP_ALL = """
            DELETE FROM {cap_share} WHERE worker = ? AND queue = ANY (?::text[])
            """;
}

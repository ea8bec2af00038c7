package io.workrow.queue.store;

/**
 * The statements on {@code workrow_queue_rule}, one row per queue: the recovery rules (backoff,
 * max-lease-expiries) and default attempts the runtimes that work a queue declare at start, which the sweeper on any
 * node applies to the queue's jobs. Mirrored by {@link QueueRuleStore}. One row per queue, so
 * each statement reads a handful of rows by primary key.
 */
final class QueueRuleSql {

    private QueueRuleSql() {
    }

    /**
     * Declares the rules of many queues in one statement, returning for each queue the rules it
     * had before when another worker declared different ones: the caller says so in the log, since
     * the nodes of one cluster should agree, and the last declaration is the one every sweeper
     * applies. Rows are upserted in queue order, so nodes starting at once wait for each other
     * instead of deadlocking.
     */
    static final String QUEUE_RULE_DECLARE = """
            WITH declared AS (
                SELECT *
                FROM unnest(?::text[], ?::bigint[], ?::float8[], ?::bigint[], ?::float8[], ?::int[], ?::int[])
                     AS declared(queue, backoff_initial_ms, backoff_multiplier, backoff_max_ms, backoff_jitter,
                                 max_lease_expiries, max_attempts)
            ), previous AS (
                SELECT rule.*
                FROM {queue_rule} AS rule
                JOIN declared ON declared.queue = rule.queue
                WHERE rule.declared_by <> ?
                  -- a rule an older node declared has no max_attempts: that is no difference
                  AND (rule.backoff_initial_ms, rule.backoff_multiplier, rule.backoff_max_ms, rule.backoff_jitter,
                       rule.max_lease_expiries, coalesce(rule.max_attempts, declared.max_attempts))
                      IS DISTINCT FROM (declared.backoff_initial_ms, declared.backoff_multiplier,
                                        declared.backoff_max_ms, declared.backoff_jitter, declared.max_lease_expiries,
                                        declared.max_attempts)
            ), upserted AS (
                INSERT INTO {queue_rule} (queue, backoff_initial_ms, backoff_multiplier, backoff_max_ms,
                                          backoff_jitter, max_lease_expiries, max_attempts, declared_by, declared_at)
                SELECT declared.*, ?, now() FROM declared
                ORDER BY declared.queue
                ON CONFLICT (queue) DO UPDATE
                SET backoff_initial_ms = excluded.backoff_initial_ms, backoff_multiplier = excluded.backoff_multiplier,
                    backoff_max_ms = excluded.backoff_max_ms, backoff_jitter = excluded.backoff_jitter,
                    max_lease_expiries = excluded.max_lease_expiries, max_attempts = excluded.max_attempts,
                    declared_by = excluded.declared_by,
                    declared_at = excluded.declared_at
            )
            SELECT queue, backoff_initial_ms, backoff_multiplier, backoff_max_ms, backoff_jitter, max_lease_expiries,
                   max_attempts, declared_by
            FROM previous
            ORDER BY queue
            """;

    /** Every queue's declared rules, by queue. */
    static final String QUEUE_RULE_LIST = """
            SELECT queue, backoff_initial_ms, backoff_multiplier, backoff_max_ms, backoff_jitter, max_lease_expiries,
                   max_attempts, declared_by
            FROM {queue_rule}
            ORDER BY queue
            """;
}

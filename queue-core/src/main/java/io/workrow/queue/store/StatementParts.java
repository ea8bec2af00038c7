package io.workrow.queue.store;

/**
 * The parts the claim and sweep statements of {@link JobSql} are built from: the queue-open check,
 * the groups of a fair queue, the lock of the jobs a fair claim chose, each fairness policy's
 * choice and grant, and the sweep's recovery rules. Where claimable jobs are is a placeholder the
 * render fills: {@code {claimable}} (the ready table, aliased {@code job}), {@code {pending}} (what a
 * row of it satisfies) and {@code {lock_match}} (how the lock finds a candidate's row
 * again). Each part's rows carry the row's {@code ctid} ({@code row}) and {@code id}; the claim
 * takes its jobs by ctid.
 */
final class StatementParts {

    private StatementParts() {
    }

    /**
     * The check the claims with named parameters share, evaluated once per statement by primary
     * key: the queue is not paused, and its breaker is closed unless the claim takes the probes
     * a half-open breaker granted ({@code :probes}).
     */
    static final String QUEUE_OPEN = """

              AND NOT EXISTS (SELECT 1 FROM {pause} WHERE queue = :queue)
              AND (:probes OR NOT EXISTS (SELECT 1 FROM {breaker} WHERE queue = :queue AND state <> 'closed'))
              AND NOT EXISTS (SELECT 1 FROM {hold} WHERE queue = :queue AND scope = 'queue' AND until > now())
            """;

    /**
     * No live hold on the partition key of the ready row {@code alias} of {@code queue} (a handler's
     * {@code SnoozeJobException.wholeKey()}, or an operator's): one probe of the hold table's
     * primary key per keyed candidate.
     */
    static String keyNotHeld(String alias, String queue) {
        // led by a space: the text block before it ends in "OR", whose trailing space a text block drops
        return " " + """
                NOT EXISTS (SELECT 1 FROM {hold} AS hold
                                   WHERE hold.queue = {q} AND hold.scope = 'key'
                                     AND hold.held_key = {a}.partition_key AND hold.until > now())"""
                .replace("{a}", alias).replace("{q}", queue);
    }

    /**
     * The start of every fair claim ({@link JobSql#JOB_CLAIM_WEIGHTED}, {@link JobSql#JOB_CLAIM_BURST},
     * {@link JobSql#JOB_CLAIM_SPACED}): the queue's groups, one per fairness key with pending jobs, found
     * by a loose index scan over the fair claim index: one index probe per key, however deep
     * each key's backlog; jobs without a key form the group {@code ''}, found in
     * the unkeyed claim index (UNION: keyed jobs written before version 7 may carry the key
     * {@code ''} too). Each
     * claim then picks, per group it lets through, how many jobs it takes ({@code take}) and each
     * job's {@code turn}, the order across groups; a group's setting and state are joined by key.
     */
    static final String FAIR_GROUPS = """
            WITH RECURSIVE keyed AS (
                (SELECT job.fairness_key
                 FROM {claimable} AS job
                 WHERE job.queue = :queue AND {pending}
                   AND {keyed}
                 ORDER BY job.fairness_key
                 LIMIT 1)
                UNION ALL
                SELECT next.fairness_key
                FROM keyed
                CROSS JOIN LATERAL (
                    SELECT job.fairness_key
                    FROM {claimable} AS job
                    WHERE job.queue = :queue AND {pending}
                      AND {keyed}
                      AND job.fairness_key > keyed.fairness_key
                    ORDER BY job.fairness_key
                    LIMIT 1) AS next
            ), keys AS (
                SELECT '' AS fairness_key
                WHERE EXISTS (SELECT 1 FROM {claimable} AS job
                              WHERE job.queue = :queue AND {pending}
                                AND {unkeyed})
                UNION
                SELECT keyed.fairness_key FROM keyed
            ), settings AS MATERIALIZED (
                SELECT keys.fairness_key, setting.weight, setting.rate_per_minute, state.virtual_start,
                       state.window_start, state.window_started, state.next_start_at
                FROM keys
                LEFT JOIN {fairness_key} AS setting
                       ON setting.queue = :queue AND setting.fairness_key = keys.fairness_key
                LEFT JOIN {fairness_state} AS state
                       ON state.queue = :queue AND state.fairness_key = keys.fairness_key
                -- A held key's group takes no turn: its fairness key is its partition key unless
                -- the jobs name one of their own, whose held rows the picks below leave out.
                WHERE keys.fairness_key = '' OR NOT EXISTS (SELECT 1 FROM {hold} AS hold
                                                           WHERE hold.queue = :queue AND hold.scope = 'key'
                                                             AND hold.held_key = keys.fairness_key
                                                             AND hold.until > now())
            )""";

    /**
     * The middle of every fair claim: the first {@code take} due jobs of each chosen group in
     * claim order (priority, due time, id), read from the fair claim index and, for the group
     * {@code ''}, also from the unkeyed claim index (for any other group that branch is cut
     * off before it reads anything; for {@code ''} the first {@code take} of both), each with its turn ({@code turn_base} plus
     * {@code turn_step} per place), then the first {@code :limit} of them by turn that no other
     * claim holds, locked. The {@code :pool} best candidates are offered to the lock, so claims
     * running at once on several nodes each still find a batch. Each claim then writes its state
     * rows in key order, so two claims never wait on each other in a cycle.
     */
    static final String FAIR_LOCK = """
            , candidates AS (
                SELECT pick.row, pick.id, pick.priority, pick.run_at, chosen.fairness_key,
                       chosen.turn_base + (pick.place - 1) * chosen.turn_step AS turn
                FROM chosen
                CROSS JOIN LATERAL (
                    SELECT group_job.*, row_number() OVER (ORDER BY group_job.priority, group_job.run_at, group_job.id) AS place
                    FROM ((SELECT job.ctid AS row, job.id, job.priority, job.run_at
                           FROM {claimable} AS job
                           WHERE chosen.fairness_key = ''
                             AND job.queue = :queue AND {pending}
                             AND {unkeyed} AND job.run_at <= now()
                           ORDER BY job.priority, job.run_at, job.id
                           LIMIT chosen.take)
                          UNION ALL
                          (SELECT job.ctid AS row, job.id, job.priority, job.run_at
                           FROM {claimable} AS job
                           WHERE job.queue = :queue AND {pending}
                             AND {keyed}
                             AND job.fairness_key = chosen.fairness_key AND job.run_at <= now()
                             AND (job.partition_key IS NULL OR""" + keyNotHeld("job", ":queue") + ")" + """
                           ORDER BY job.priority, job.run_at, job.id
                           LIMIT chosen.take)) AS group_job
                    ORDER BY group_job.priority, group_job.run_at, group_job.id
                    LIMIT chosen.take
                ) AS pick
            ), locked AS MATERIALIZED (
                SELECT job.ctid AS row, job.id, candidate.fairness_key, candidate.turn
                FROM (SELECT * FROM candidates ORDER BY turn, priority, run_at, id LIMIT :pool) AS candidate
                JOIN {claimable} AS job ON {lock_match}
                WHERE {pending} AND job.run_at <= now()
                  AND (job.partition_key IS NULL OR """ + keyNotHeld("job", "job.queue") + ")" + QUEUE_OPEN + """
                ORDER BY candidate.turn, candidate.priority, candidate.run_at, candidate.id
                LIMIT :limit
                FOR UPDATE OF job SKIP LOCKED
            )""";

    /** The part of a weighted fair queue's claim before the lock: the groups it takes, how many jobs each, their turns. */
    static final String WEIGHTED_CHOICE = """
            , starts AS MATERIALIZED (
                SELECT settings.fairness_key, coalesce(settings.weight, 1) AS weight,
                       greatest(clock.virtual_now, settings.virtual_start + 1 / coalesce(settings.weight, 1))
                           AS first_start
                FROM settings
                CROSS JOIN (SELECT coalesce(max(state.virtual_start), 0) AS virtual_now
                            FROM {fairness_state} AS state
                            WHERE state.queue = :queue) AS clock
            ), horizon AS (
                SELECT coalesce((SELECT first_start FROM starts ORDER BY first_start OFFSET :pool - 1 LIMIT 1),
                                (SELECT max(first_start) + :pool / sum(weight) FROM starts)) AS virtual_end
            ), chosen AS (
                SELECT starts.fairness_key, starts.first_start AS turn_base, 1 / starts.weight AS turn_step,
                       least(:pool, floor((horizon.virtual_end - starts.first_start) * starts.weight) + 1)::int
                           AS take
                FROM starts
                CROSS JOIN horizon
                WHERE starts.first_start <= horizon.virtual_end
            )""";

    /** The part of a weighted fair queue's claim after the lock: the groups' state written back, the jobs granted. */
    static final String WEIGHTED_GRANT = """
            , served AS (
                INSERT INTO {fairness_state} AS state (queue, fairness_key, virtual_start, touched_at)
                SELECT :queue, locked.fairness_key, max(locked.turn), now()
                FROM locked
                GROUP BY locked.fairness_key
                ORDER BY locked.fairness_key
                ON CONFLICT (queue, fairness_key) DO UPDATE
                SET virtual_start = greatest(state.virtual_start, excluded.virtual_start),
                    touched_at = excluded.touched_at
            ), due AS (
                SELECT locked.row, locked.id FROM locked
            )""";

    /** The part of a burst fair queue's claim before the lock: the groups it takes, how many jobs each, their turns. */
    static final String BURST_CHOICE = """
            , allowances AS MATERIALIZED (
                SELECT settings.fairness_key, rate.per_minute, rate.per_minute - counted.started AS allowed
                FROM settings
                CROSS JOIN LATERAL (SELECT coalesce(settings.rate_per_minute, :rate_per_minute) AS per_minute) AS rate
                CROSS JOIN LATERAL (SELECT CASE WHEN settings.window_start = date_trunc('minute', now())
                                                THEN settings.window_started ELSE 0 END AS started) AS counted
                WHERE counted.started < rate.per_minute
                ORDER BY counted.started, settings.fairness_key
                LIMIT :pool
            ), chosen AS (
                SELECT allowances.fairness_key, 0 AS turn_base, 1 AS turn_step,
                       least(allowances.allowed, ceil(:pool::float8 / (SELECT count(*) FROM allowances)))::int AS take
                FROM allowances
            )""";

    /** The part of a burst fair queue's claim after the lock: the groups' state written back, the jobs granted. */
    static final String BURST_GRANT = """
            , granted AS (
                INSERT INTO {fairness_state} AS state (queue, fairness_key, window_start, window_limit,
                                                       window_started, window_granted, touched_at)
                SELECT :queue, locked.fairness_key, date_trunc('minute', now()), min(allowances.per_minute),
                       count(*), count(*), now()
                FROM locked
                JOIN allowances ON allowances.fairness_key = locked.fairness_key
                GROUP BY locked.fairness_key
                ORDER BY locked.fairness_key
                ON CONFLICT (queue, fairness_key) DO UPDATE
                SET window_granted = CASE WHEN state.window_start IS NULL OR state.window_start < excluded.window_start
                                          THEN least(excluded.window_granted, excluded.window_limit)
                                          WHEN state.window_start = excluded.window_start
                                          THEN greatest(0, least(excluded.window_granted,
                                                                 excluded.window_limit - state.window_started))
                                          ELSE 0 END,
                    window_started = CASE WHEN state.window_start IS NULL OR state.window_start < excluded.window_start
                                          THEN least(excluded.window_granted, excluded.window_limit)
                                          WHEN state.window_start = excluded.window_start
                                          THEN state.window_started
                                               + greatest(0, least(excluded.window_granted,
                                                                   excluded.window_limit - state.window_started))
                                          ELSE state.window_started END,
                    window_start = greatest(state.window_start, excluded.window_start),
                    window_limit = excluded.window_limit,
                    touched_at = excluded.touched_at
                RETURNING state.fairness_key, state.window_granted
            ), due AS (
                SELECT placed.row, placed.id
                FROM (SELECT locked.row, locked.id, locked.fairness_key,
                             row_number() OVER (PARTITION BY locked.fairness_key ORDER BY locked.turn) AS place
                      FROM locked) AS placed
                JOIN granted ON granted.fairness_key = placed.fairness_key AND placed.place <= granted.window_granted
            )""";

    /** The part of a spaced fair queue's claim before the lock: the groups it takes, how many jobs each, their turns. */
    static final String SPACED_CHOICE = """
            , chosen AS MATERIALIZED (
                SELECT settings.fairness_key, 0 AS turn_base, 0 AS turn_step, 1 AS take,
                       60000.0 / coalesce(settings.rate_per_minute, :rate_per_minute) AS spacing_ms
                FROM settings
                WHERE settings.next_start_at IS NULL OR settings.next_start_at <= now()
                ORDER BY settings.next_start_at NULLS FIRST, settings.fairness_key
                LIMIT :pool
            )""";

    /** The part of a spaced fair queue's claim after the lock: the groups' state written back, the jobs granted. */
    static final String SPACED_GRANT = """
            , granted AS (
                INSERT INTO {fairness_state} AS state (queue, fairness_key, next_start_at, touched_at)
                SELECT :queue, locked.fairness_key, now() + chosen.spacing_ms * interval '1 millisecond', now()
                FROM locked
                JOIN chosen ON chosen.fairness_key = locked.fairness_key
                ORDER BY locked.fairness_key
                ON CONFLICT (queue, fairness_key) DO UPDATE
                SET next_start_at = excluded.next_start_at, touched_at = excluded.touched_at
                WHERE state.next_start_at IS NULL OR state.next_start_at <= now()
                RETURNING state.fairness_key
            ), due AS (
                SELECT locked.row, locked.id FROM locked JOIN granted ON granted.fairness_key = locked.fairness_key
            )""";

    /**
     * The recovery rule of each queue whose jobs the sweep took (the CTE {@code swept}, with a
     * {@code queue} column): as declared in workrow_queue_rule by the runtimes that work the queue,
     * else this node's configuration (six arrays bound here: queue, initial ms, multiplier, max ms,
     * jitter, max lease expiries); queues in neither take the statement's fallback values.
     */
    static String recoveryRules(String swept) {
        return """

                    SELECT declared.queue, declared.backoff_initial_ms AS initial_ms,
                           declared.backoff_multiplier AS multiplier, declared.backoff_max_ms AS max_ms,
                           declared.backoff_jitter AS jitter, declared.max_lease_expiries
                    FROM {queue_rule} AS declared
                    WHERE declared.queue IN (SELECT queue FROM {swept})
                    UNION ALL
                    SELECT *
                    FROM unnest(?::text[], ?::bigint[], ?::float8[], ?::bigint[], ?::float8[], ?::int[])
                         AS configured(queue, initial_ms, multiplier, max_ms, jitter, max_lease_expiries)
                    WHERE NOT EXISTS (SELECT 1 FROM {queue_rule} AS declared
                                      WHERE declared.queue = configured.queue)""".replace("{swept}", swept);
    }

    /**
     * The start of every renewal: records the renewing runtime (parameters: worker, vouch in
     * milliseconds, tokens) as the holder of every token it renews, locked rows' included, never
     * moving a holder's row back, and deletes holders gone an hour (parameter: the renewing worker).
     */
    static final String LEASE_HOLDER_VOUCH = """
            WITH holder AS (
                INSERT INTO {lease_holder} (worker, renewed_until, tokens)
                VALUES (?, clock_timestamp() + ? * interval '1 millisecond', ?::bigint[])
                ON CONFLICT (worker) DO UPDATE SET renewed_until = excluded.renewed_until, tokens = excluded.tokens
                WHERE {lease_holder}.renewed_until < excluded.renewed_until
            ), gone AS (
                DELETE FROM {lease_holder}
                WHERE renewed_until < clock_timestamp() - interval '1 hour' AND worker <> ?
            )""";

    /**
     * A retry's delay in milliseconds: {@code initial * multiplier^exponent}, capped at {@code max},
     * with {@code jitter} as a fraction either way. The power is {@code exp(n ln multiplier)} kept
     * inside float8 for any {@code n}: {@code power()} overflows, and fails the whole statement, on
     * a job's thousandth attempt. Each argument is an SQL expression, in the order its parameters
     * are bound.
     */
    static String backoffMillis(String max, String initial, String multiplier, String exponent, String jitter) {
        return "least(" + max + ", " + initial + " * exp(least(ln(" + multiplier + ") * (" + exponent + "), 600)))"
                + " * (1 + " + jitter + " * (2 * random() - 1))";
    }
}

package io.workrow.queue.store;

/**
 * Every statement Workrow runs against its tables, one named text block each, mirrored by the
 * {@link RowPerJobStore} method of the same name. {@code {job}}, {@code {pause}}, {@code {stats}} and
 * {@code {lease_token_seq}} are replaced once, at start-up, with the quoted names in the configured schema; all values are bind
 * parameters.
 *
 * <p><b>Fencing.</b> Every statement that finalizes or touches a held job matches
 * {@code id} and {@code lease_token}. The table's check constraint
 * {@code workrow_job_token_only_while_running} makes a token exist exactly while the job is
 * {@code running} (every transition out of running clears it, and each claim draws a new one), so
 * the token match is the whole fence. The batch statements a runtime runs on its own
 * ({@code *_MANY}, renewals) lock the rows they change with {@code SKIP LOCKED}: a row another
 * session holds is never waited on, and {@link #JOB_HOLDERS} says whether it is still ours. The statements deliberately do not add
 * {@code status = 'running'}: that predicate lets the planner pick the partial lease index, which
 * under heavy churn is full of dead entries, instead of the primary key; measured, completion
 * throughput fell from thousands to hundreds of jobs per second over a 100,000-job drain.
 *
 * <p>Time always comes from the database. Statements that may run inside a long transaction (a
 * transactional handler's completion) use {@code clock_timestamp()}, because {@code now()} is the
 * transaction's start.
 */
final class JobSql {

    /**
     * A pending job of {@code job} without a partition or fairness key: the predicate of
     * workrow_job_unkeyed_claim_idx (V8), written as the index states it so that the planner can
     * prove a query may use the index. Every statement that reads pending jobs in claim order
     * reads this part and {@link #KEYED}, which together are every pending job.
     */
    private static final String UNKEYED = "job.partition_key IS NULL AND job.fairness_key = ''";

    /** A pending job with a key: the predicate of workrow_job_keyed_claim_idx and workrow_job_fair_claim_idx. */
    private static final String KEYED = "(job.partition_key IS NOT NULL OR job.fairness_key <> '')";

    private JobSql() {
    }

    /**
     * Inserts many jobs in one round trip from parallel arrays. Jobs without an idempotency key
     * come first, in input order, so their identity values follow input order, which is how ids
     * are matched back to requests without keys; jobs with a key follow in (queue, key) order,
     * matched back by key. That order is what keeps concurrent inserts sharing keys from
     * deadlocking: each waits on the unique index for a key another uncommitted insert holds, and
     * inserts that take their keys in one order wait in line instead of in a circle. A conflicting idempotency key inserts nothing and returns nothing; the
     * caller looks those ids up with {@link #JOB_FIND_BY_IDEMPOTENCY_KEYS}. A delay counts from
     * this statement ({@code statement_timestamp()}), not from the start of the enqueueing
     * transaction, which may be long before. A job due later is {@code scheduled}, outside the
     * claim indexes, until {@link #JOB_PROMOTE_SCHEDULED} makes it pending.
     */
    private static final String INSERT_MANY_ROWS = """
            INSERT INTO {job} (queue, partition_key, partition_bucket, priority, idempotency_key,
                               payload, headers, status, run_at, max_attempts, fairness_key)
            SELECT input.queue, input.partition_key, input.partition_bucket::smallint, input.priority::smallint,
                   input.idempotency_key, input.payload::jsonb, input.headers::jsonb,
                   CASE WHEN due.run_at > statement_timestamp() THEN 'scheduled' ELSE 'pending' END,
                   due.run_at,
                   input.max_attempts,
                   coalesce(input.fairness_key, input.partition_key, '')
            FROM unnest(?::text[], ?::text[], ?::int[], ?::int[], ?::text[], ?::text[], ?::text[],
                        ?::text[], ?::bigint[], ?::int[], ?::text[])
                 WITH ORDINALITY AS input(queue, partition_key, partition_bucket, priority, idempotency_key,
                                          payload, headers, run_at, delay_ms, max_attempts, fairness_key, ord)
            CROSS JOIN LATERAL (
                SELECT coalesce(input.run_at::timestamptz,
                                statement_timestamp() + coalesce(input.delay_ms, 0) * interval '1 millisecond')
                       AS run_at
            ) AS due
            ORDER BY input.idempotency_key IS NOT NULL,
                     CASE WHEN input.idempotency_key IS NOT NULL THEN input.queue END,
                     input.idempotency_key, input.ord
            """;

    /** {@link #INSERT_MANY_ROWS}; workrow_job_idempotency_idx serves the conflict check. */
    static final String JOB_INSERT_MANY = INSERT_MANY_ROWS + """
            ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
            RETURNING id, queue, idempotency_key
            """;

    /**
     * {@link #JOB_INSERT_MANY} for a batch in which no job has an idempotency key, so nothing can
     * conflict: without ON CONFLICT, PostgreSQL inserts each row directly instead of speculatively
     * (a check of the arbiter index and a confirmation per row), about a tenth of a bulk insert.
     */
    static final String JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS = INSERT_MANY_ROWS + """
            RETURNING id, queue, idempotency_key
            """;

    /**
     * One job: the same columns and rules as {@link #JOB_INSERT_MANY}, from a row of parameters
     * instead of eleven arrays. A single enqueue is the common case and the one a waiting worker
     * feels: binding and unnesting arrays costs it a third of its round trip.
     */
    static final String JOB_INSERT_ONE = """
            INSERT INTO {job} (queue, partition_key, partition_bucket, priority, idempotency_key,
                               payload, headers, status, run_at, max_attempts, fairness_key)
            SELECT input.queue, input.partition_key, input.partition_bucket, input.priority,
                   input.idempotency_key, input.payload, input.headers,
                   CASE WHEN due.run_at > statement_timestamp() THEN 'scheduled' ELSE 'pending' END,
                   due.run_at,
                   input.max_attempts,
                   coalesce(input.fairness_key, input.partition_key, '')
            FROM (VALUES (?::text, ?::text, ?::smallint, ?::smallint, ?::text, ?::jsonb, ?::jsonb,
                          ?::timestamptz, ?::bigint, ?::int, ?::text))
                 AS input(queue, partition_key, partition_bucket, priority, idempotency_key,
                          payload, headers, run_at, delay_ms, max_attempts, fairness_key)
            CROSS JOIN LATERAL (
                SELECT coalesce(input.run_at,
                                statement_timestamp() + coalesce(input.delay_ms, 0) * interval '1 millisecond')
                       AS run_at
            ) AS due
            ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
            RETURNING id
            """;

    /**
     * Ids of existing jobs by (queue, idempotency key). A separate statement from the insert on
     * purpose: it takes a fresh snapshot, so it sees a row that a concurrent producer committed
     * while our insert waited on the unique index.
     */
    static final String JOB_FIND_BY_IDEMPOTENCY_KEYS = """
            SELECT job.id, job.queue, job.idempotency_key
            FROM {job} AS job
            JOIN unnest(?::text[], ?::text[]) AS wanted(queue, idempotency_key)
              ON job.queue = wanted.queue AND job.idempotency_key = wanted.idempotency_key
            """;

    /**
     * The end every claim shares: runs the jobs its CTE {@code due} selected for {@code worker}
     * with a lease of {@code leaseMs} milliseconds (parameter markers, positional or named), sets
     * {@code ordered_key} to {@code orderedKey} (a column expression or {@code NULL}) and returns
     * what {@code ClaimedJob} is read from.
     */
    private static String start(String worker, String leaseMs, String orderedKey) {
        return """

                UPDATE {job} AS job
                SET status = 'running',
                    claimed_by = {claimant},
                    lease_token = nextval({lease_token_seq}),
                    lease_expires_at = now() + {lease_ms} * interval '1 millisecond',
                    attempts = job.attempts + 1,
                    ordered_key = {ordered_key},
                    started_at = now(),
                    updated_at = now()
                FROM due
                WHERE job.id = due.id
                RETURNING job.id, job.queue, job.partition_key, job.idempotency_key, job.payload::text AS payload,
                          job.headers::text AS headers, job.attempts, job.max_attempts, job.step,
                          job.lease_token, job.run_at
                """.replace("{claimant}", worker).replace("{lease_ms}", leaseMs).replace("{ordered_key}", orderedKey);
    }

    /**
     * Claims up to n due jobs of one queue in one statement. Pending jobs are in one of two claim
     * indexes (V8): workrow_job_unkeyed_claim_idx for jobs without a key, workrow_job_keyed_claim_idx
     * for jobs with one. Each CTE walks its index in claim order, skipping rows another worker has
     * locked, and the first n of both by claim order are claimed (on a queue without keys the keyed
     * walk is one index probe that finds nothing). Rows one walk locked beyond the n are released
     * when the statement commits. Pending rows are due (jobs due later wait as scheduled), so a
     * walk reads only what it may claim; the run_at condition stays for rows an operator made
     * pending early, so concurrent pollers never wait on or take the same row. Attempts are
     * counted here, not at failure, so a job that kills its worker still moves toward retirement.
     * Each row gets its own new fencing token. A paused queue (a row in workrow_queue_pause) claims
     * nothing, nor does one whose circuit breaker is not closed, unless this claim takes the probes
     * the breaker granted (the boolean parameter): {@code open} is evaluated once per statement,
     * by primary key, before either walk. It clears ordered_key, which only the ordered claim sets.
     */
    static final String JOB_CLAIM = """
            WITH open AS (
                SELECT NOT EXISTS (SELECT 1 FROM {pause} WHERE queue = ?)
                       AND (?::boolean OR NOT EXISTS (SELECT 1 FROM {breaker} WHERE queue = ? AND state <> 'closed'))
                       AS open
            ), unkeyed AS (
                SELECT job.id, job.priority, job.run_at
                FROM {job} AS job
                WHERE job.queue = ? AND job.status = 'pending' AND {unkeyed}
                  AND job.run_at <= now() AND (SELECT open FROM open)
                ORDER BY job.priority, job.run_at, job.id
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), keyed AS (
                SELECT job.id, job.priority, job.run_at
                FROM {job} AS job
                WHERE job.queue = ? AND job.status = 'pending' AND {keyed}
                  AND job.run_at <= now() AND (SELECT open FROM open)
                ORDER BY job.priority, job.run_at, job.id
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), due AS (
                SELECT id
                FROM (SELECT * FROM unkeyed UNION ALL SELECT * FROM keyed) AS candidate
                ORDER BY priority, run_at, id
                LIMIT ?
            )""" + start("?", "?", "NULL");


    /**
     * Claims up to {@code :limit} jobs of an ordered queue: for each partition key in the buckets
     * this worker owns ({@code :buckets}), only the key's oldest pending job (its head), and only
     * while no job of the key is running, here or on any node; with {@code :skip_failed} false
     * (key-failure block) also only while no older job of the key waits as scheduled. Jobs without
     * a key are not ordered and not bound to buckets. Different keys run in parallel.
     *
     * <p>Two ways to find heads, so that no claim walks a backlog: the fast path reads the first
     * {@code :walk} due rows in claim order (both claim indexes, merged) and probes only rows that
     * are the oldest of their key within the walk (a later row of a key cannot be its head); when
     * that finds too few, a loose index scan visits key heads in key order
     * (workrow_job_key_pending_idx), one index probe per key, and stops as soon as it has a batch;
     * jobs without a partition key beyond the walk come from workrow_job_unkeyed_claim_idx and, for
     * those with only a fairness key, workrow_job_keyless_claim_idx. Running and older
     * scheduled jobs are looked up in workrow_job_key_held_idx.
     *
     * <p>Concurrency: the checks read this statement's snapshot and only heads are offered; a head
     * another claimer holds is skipped (its key's next job is still not a head in this snapshot),
     * and one claimed or finished since is dropped by the lock's re-check of its status. What a
     * snapshot cannot see (an older job of the key committed late, an operator's retry) is caught by
     * workrow_job_key_running_idx: ordered_key is unique among running jobs, so the later of two
     * such claims fails and is tried again. The claim sets ordered_key to the partition key.
     */
    static final String JOB_CLAIM_ORDERED = """
            WITH RECURSIVE walk AS MATERIALIZED (
                SELECT w.*, min(w.id) OVER (PARTITION BY w.partition_key) AS key_min
                FROM ((SELECT job.id, job.partition_key, job.partition_bucket, job.priority, job.run_at
                       FROM {job} AS job
                       WHERE job.queue = :queue AND job.status = 'pending'
                         AND {unkeyed} AND job.run_at <= now()
                       ORDER BY job.priority, job.run_at, job.id
                       LIMIT :walk)
                      UNION ALL
                      (SELECT job.id, job.partition_key, job.partition_bucket, job.priority, job.run_at
                       FROM {job} AS job
                       WHERE job.queue = :queue AND job.status = 'pending'
                         AND {keyed} AND job.run_at <= now()
                       ORDER BY job.priority, job.run_at, job.id
                       LIMIT :walk)
                      ORDER BY priority, run_at, id
                      LIMIT :walk) AS w
            ), fast AS MATERIALIZED (
                SELECT walk.id, walk.priority, walk.run_at
                FROM walk
                WHERE walk.partition_key IS NULL
                   OR (walk.partition_bucket = ANY (:buckets::int[])
                       AND walk.id = walk.key_min
                       AND NOT EXISTS (SELECT 1 FROM {job} AS older
                                       WHERE older.queue = :queue AND older.partition_key = walk.partition_key
                                         AND older.status = 'pending' AND older.id < walk.id)
                       AND NOT EXISTS (SELECT 1 FROM {job} AS held
                                       WHERE held.queue = :queue AND held.partition_key = walk.partition_key
                                         AND held.status IN ('scheduled', 'running')
                                         AND (held.status = 'running' OR (NOT :skip_failed AND held.id < walk.id))))
                ORDER BY walk.priority, walk.run_at, walk.id
                LIMIT :limit
            ), heads AS (
                (SELECT job.partition_key, job.id, job.partition_bucket, job.priority, job.run_at
                 FROM {job} AS job
                 WHERE job.queue = :queue AND job.status = 'pending' AND job.partition_key IS NOT NULL
                 ORDER BY job.partition_key, job.id
                 LIMIT 1)
                UNION ALL
                SELECT next.*
                FROM heads
                CROSS JOIN LATERAL (
                    SELECT job.partition_key, job.id, job.partition_bucket, job.priority, job.run_at
                    FROM {job} AS job
                    WHERE job.queue = :queue AND job.status = 'pending' AND job.partition_key IS NOT NULL
                      AND job.partition_key > heads.partition_key
                    ORDER BY job.partition_key, job.id
                    LIMIT 1) AS next
            ), candidates AS (
                SELECT fast.id, fast.priority, fast.run_at FROM fast
                UNION
                (SELECT heads.id, heads.priority, heads.run_at
                 FROM heads
                 WHERE (SELECT count(*) FROM fast) < :limit
                   AND heads.partition_bucket = ANY (:buckets::int[]) AND heads.run_at <= now()
                   AND NOT EXISTS (SELECT 1 FROM {job} AS held
                                   WHERE held.queue = :queue AND held.partition_key = heads.partition_key
                                     AND held.status IN ('scheduled', 'running')
                                     AND (held.status = 'running' OR (NOT :skip_failed AND held.id < heads.id)))
                 LIMIT :limit)
                UNION
                (SELECT keyless.*
                 FROM ((SELECT job.id, job.priority, job.run_at
                        FROM {job} AS job
                        WHERE job.queue = :queue AND job.status = 'pending'
                          AND {unkeyed} AND job.run_at <= now()
                        ORDER BY job.priority, job.run_at, job.id
                        LIMIT :limit)
                       UNION ALL
                       (SELECT job.id, job.priority, job.run_at
                        FROM {job} AS job
                        WHERE job.queue = :queue AND job.status = 'pending'
                          AND job.partition_key IS NULL AND job.fairness_key <> '' AND job.run_at <= now()
                        ORDER BY job.priority, job.run_at, job.id
                        LIMIT :limit)) AS keyless
                 WHERE (SELECT count(*) FROM fast) < :limit
                 ORDER BY keyless.priority, keyless.run_at, keyless.id
                 LIMIT :limit)
            ), due AS (
                SELECT job.id
                FROM (SELECT * FROM candidates ORDER BY priority, run_at, id LIMIT :limit * 4) AS candidate
                JOIN {job} AS job ON job.id = candidate.id
                WHERE job.status = 'pending' AND job.run_at <= now()""" + StatementParts.QUEUE_OPEN + """
                ORDER BY candidate.priority, candidate.run_at, candidate.id
                LIMIT :limit
                FOR UPDATE OF job SKIP LOCKED
            )""" + start(":worker", ":lease_ms", "job.partition_key");





    /**
     * Claims up to {@code :limit} jobs of a weighted fair queue: groups share the queue's starts in
     * proportion to their weights (workrow_fairness_key, default 1), by start-time fair queuing.
     * Each group's next job gets a virtual start: one step ({@code 1 / weight}) after the group's
     * last claimed job (workrow_fairness_state.virtual_start), but never before the virtual clock,
     * the latest virtual start claimed on the queue (jobs are claimed in order of virtual start),
     * so a group that was idle or is new joins level with the others instead of with credit saved
     * up, and one that waited has no debt to pay off either. Jobs are claimed in order of virtual
     * start, and each group's latest is written back. Only groups whose first job starts before the
     * horizon (the {@code :pool}-th first start) are read, each only as deep as the horizon.
     */
    static final String JOB_CLAIM_WEIGHTED = StatementParts.FAIR_GROUPS + StatementParts.WEIGHTED_CHOICE
            + StatementParts.FAIR_LOCK + StatementParts.WEIGHTED_GRANT + start(":worker", ":lease_ms", "NULL");

    /**
     * Claims up to {@code :limit} jobs of a burst fair queue: each group starts at most its rate
     * ({@code rate_per_minute} in workrow_fairness_key, else {@code :rate_per_minute}) per minute
     * of the database's clock, ranked by claim order within the group and taken round the groups
     * in turn, the groups that started fewest this minute first. The count is kept in
     * workrow_fairness_state and granted under its row lock, in this statement: a locked job
     * beyond what the group's window still allows (another node took the rest meanwhile) stays
     * pending. A claim whose minute is older than the window already counted grants nothing.
     */
    static final String JOB_CLAIM_BURST = StatementParts.FAIR_GROUPS + StatementParts.BURST_CHOICE
            + StatementParts.FAIR_LOCK + StatementParts.BURST_GRANT + start(":worker", ":lease_ms", "NULL");

    /**
     * Claims up to {@code :limit} jobs of a spaced fair queue: one job per group at a time, and
     * each group's next start no sooner than {@code 60 s / rate} after its last
     * (workrow_fairness_state.next_start_at, the frontier). Groups that have waited longest go
     * first. The frontier moves under its row lock in this statement, and only when it has been
     * reached: of two claims that locked jobs of one group at once, the second finds the frontier
     * moved and leaves its job pending. Starts are spaced on the database's {@code now()}.
     */
    static final String JOB_CLAIM_SPACED = StatementParts.FAIR_GROUPS + StatementParts.SPACED_CHOICE
            + StatementParts.FAIR_LOCK + StatementParts.SPACED_GRANT + start(":worker", ":lease_ms", "NULL");

    /**
     * Completes many jobs in one statement, each fenced by its own token. Rows locked by another
     * session are skipped, not waited on, so one row held in a long transaction (an operator's
     * psql session, say) never stalls the other completions; the caller tells a skipped row from a
     * lost lease with {@link #JOB_HOLDERS} and tries the skipped one again. Served by the primary
     * key: the join starts from the unnest and looks each id up.
     */
    static final String JOB_COMPLETE_MANY = """
            WITH held AS (
                SELECT job.id, done.token
                FROM unnest(?::bigint[], ?::bigint[]) AS done(id, token)
                JOIN {job} AS job ON job.id = done.id AND job.lease_token = done.token
                FOR UPDATE OF job SKIP LOCKED
            )
            UPDATE {job} AS job
            SET status = 'completed',
                finished_at = clock_timestamp(),
                updated_at = clock_timestamp(),
                lease_expires_at = NULL,
                lease_token = NULL
            FROM held
            WHERE job.id = held.id
            RETURNING job.id, held.token
            """;

    /**
     * Completes one job inside a transactional handler's transaction, fenced. Unlike
     * {@link #JOB_COMPLETE_MANY} it waits for a row lock (a lease renewal holds one for a moment):
     * skipping would roll back the handler's work for nothing.
     */
    static final String JOB_COMPLETE = """
            UPDATE {job}
            SET status = 'completed',
                finished_at = clock_timestamp(),
                updated_at = clock_timestamp(),
                lease_expires_at = NULL,
                lease_token = NULL
            WHERE id = ? AND lease_token = ?
            """;

    /**
     * Records many failed attempts in one statement, each fenced by its own token and skipping
     * rows locked elsewhere (see {@link #JOB_COMPLETE_MANY}). A job with attempts left is scheduled
     * again, its due time moved forward by its retry delay (a field, not a sleep); a job out of attempts, or discarded, is dead and keeps its
     * last owner for the record. Returns each recorded id with its new status.
     */
    static final String JOB_FAIL_MANY = """
            WITH held AS (
                SELECT job.id, failed.token, failed.error, failed.retry_delay_ms,
                       failed.discard OR job.attempts >= job.max_attempts AS dead
                FROM unnest(?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?::boolean[])
                     AS failed(id, token, error, retry_delay_ms, discard)
                JOIN {job} AS job ON job.id = failed.id AND job.lease_token = failed.token
                FOR UPDATE OF job SKIP LOCKED
            )
            UPDATE {job} AS job
            SET status = CASE WHEN held.dead THEN 'dead'
                              WHEN held.retry_delay_ms > 0 THEN 'scheduled' ELSE 'pending' END,
                run_at = CASE WHEN held.dead THEN job.run_at
                              ELSE clock_timestamp() + held.retry_delay_ms * interval '1 millisecond' END,
                finished_at = CASE WHEN held.dead THEN clock_timestamp() END,
                claimed_by = CASE WHEN held.dead THEN job.claimed_by END,
                last_error = held.error,
                last_error_at = clock_timestamp(),
                lease_expires_at = NULL,
                lease_token = NULL,
                updated_at = clock_timestamp()
            FROM held
            WHERE job.id = held.id
            RETURNING job.id, held.token, job.status
            """;

    /**
     * Who holds these jobs now: for ids a batch statement did not match, tells a row that was only
     * locked (its token still matches: try again) from a lost lease or a cancellation. A plain
     * read, so it never waits on a lock. Served by the primary key.
     */
    static final String JOB_HOLDERS = """
            SELECT job.id, job.status, job.lease_token
            FROM unnest(?::bigint[]) AS wanted(id)
            JOIN {job} AS job ON job.id = wanted.id
            """;

    /**
     * Renews the leases of every job one runtime holds, in one statement: each row's expiry moves
     * to its own lease from the database's current time. Fenced by token; rows locked elsewhere are
     * skipped and told apart with {@link #JOB_HOLDERS}. Served by the primary key. The same
     * statement records the runtime as the holder of every token it renews, locked rows' included,
     * vouched for until its shortest lease from now (workrow_lease_holder): a row another session
     * keeps locked cannot take its renewal, and {@link #JOB_SWEEP_EXPIRED_LEASES} passes over it
     * while its holder vouches for it, so a lock held elsewhere delays a renewal but never loses a
     * lease. A renewal that commits late (its connection was given up on) never moves a holder's
     * row back. Holders gone an hour are deleted here, by whoever renews next.
     *
     * <p>Each row renewed is returned with its token: a job this runtime lost and claimed again
     * has two runs here for a while, and only the run whose token matched was renewed.
     */
    static final String JOB_RENEW_LEASES = StatementParts.LEASE_HOLDER_VOUCH + """
            , held AS (
                SELECT job.id, renewal.lease_ms
                FROM unnest(?::bigint[], ?::bigint[], ?::bigint[]) AS renewal(id, token, lease_ms)
                JOIN {job} AS job ON job.id = renewal.id AND job.lease_token = renewal.token
                FOR UPDATE OF job SKIP LOCKED
            )
            UPDATE {job} AS job
            SET lease_expires_at = clock_timestamp() + held.lease_ms * interval '1 millisecond'
            FROM held
            WHERE job.id = held.id
            RETURNING job.id, job.lease_token AS token
            """;

    /** A stopping runtime vouches for no lease any more: what it still holds expires as usual. */
    static final String LEASE_HOLDER_FORGET = """
            DELETE FROM {lease_holder} WHERE worker = ?
            """;

    /** Heartbeat: moves the lease expiry forward from the database's current time, fenced. */
    static final String JOB_EXTEND_LEASE = """
            UPDATE {job}
            SET lease_expires_at = clock_timestamp() + ? * interval '1 millisecond',
                updated_at = clock_timestamp()
            WHERE id = ? AND lease_token = ?
            """;

    /** Records the step a multi-step job reached, fenced, so a retry resumes from it. */
    static final String JOB_SAVE_STEP = """
            UPDATE {job}
            SET step = ?,
                updated_at = clock_timestamp()
            WHERE id = ? AND lease_token = ?
            """;

    /**
     * Hands jobs back at shutdown, fenced and skipping locked rows: pending again at once, with no
     * owner. A job whose handler never started gets its attempt back ({@code give_back}); one whose
     * handler was interrupted keeps it, so a job that always outlives the shutdown timeout still
     * moves toward retirement, and is dead here when that was its last attempt.
     */
    static final String JOB_RELEASE_MANY = """
            WITH held AS (
                SELECT job.id, released.token, released.give_back,
                       NOT released.give_back AND job.attempts >= job.max_attempts AS dead
                FROM unnest(?::bigint[], ?::bigint[], ?::boolean[]) AS released(id, token, give_back)
                JOIN {job} AS job ON job.id = released.id AND job.lease_token = released.token
                FOR UPDATE OF job SKIP LOCKED
            )
            UPDATE {job} AS job
            SET status = CASE WHEN held.dead THEN 'dead' ELSE 'pending' END,
                attempts = CASE WHEN held.give_back THEN greatest(job.attempts - 1, 0) ELSE job.attempts END,
                finished_at = CASE WHEN held.dead THEN clock_timestamp() END,
                last_error = CASE WHEN held.give_back THEN job.last_error
                                  ELSE 'interrupted by shutdown of ' || job.claimed_by END,
                last_error_at = CASE WHEN held.give_back THEN job.last_error_at ELSE clock_timestamp() END,
                claimed_by = CASE WHEN held.dead THEN job.claimed_by END,
                lease_expires_at = NULL,
                lease_token = NULL,
                updated_at = clock_timestamp()
            FROM held
            WHERE job.id = held.id
            RETURNING job.id, held.token, job.status
            """;

    /**
     * Returns jobs whose lease expired to scheduled (pending when the backoff is zero), or to dead,
     * and clears the owner. Every expiry is counted in {@code lease_expiries}, apart from the
     * handler's failures. A queue with a {@code max_lease_expiries} of its own gives the attempt
     * back (a crash is not a handler failure) and retires the job once its lease has expired that
     * many times ("lease expired N times"); other queues spend the attempt, so a job that keeps
     * killing its worker still retires when its attempts are spent. A recovered job waits its
     * queue's backoff before it runs again (the per-queue arrays, else the default rule): a job
     * that kills its worker must not take the next node down at once. Its {@code run_at} becomes
     * that new due time, so queue lag counts from when it is due again, not from its first due
     * time. Served by workrow_job_lease_idx (the stable {@code statement_timestamp()} can be its
     * index condition). SKIP LOCKED lets every node run the sweeper at once without waiting on each
     * other or moving a row twice.
     *
     * <p>A job whose holder still vouches for its token (workrow_lease_holder, written by every
     * renewal) is passed over: its row was locked elsewhere when the renewal came, and its holder
     * is alive. The rules are the queue's own, as declared in workrow_queue_rule by the runtimes
     * that work it; the arrays (this node's configuration) serve queues no runtime has declared,
     * and the single values every other queue.
     */
    static final String JOB_SWEEP_EXPIRED_LEASES = """
            WITH expired AS (
                SELECT job.id, job.queue, job.claimed_by
                FROM {job} AS job
                WHERE job.status = 'running' AND job.lease_expires_at < statement_timestamp()
                  AND NOT EXISTS (SELECT 1 FROM {lease_holder} AS holder
                                  WHERE holder.worker = job.claimed_by
                                    AND holder.renewed_until > statement_timestamp()
                                    AND job.lease_token = ANY (holder.tokens))
                ORDER BY job.lease_expires_at
                LIMIT ?
                FOR UPDATE OF job SKIP LOCKED
            ), rule AS (""" + StatementParts.recoveryRules("expired") + """
            ), counted AS (
                SELECT expired.id, expired.claimed_by, job.lease_expiries + 1 AS expiries,
                       coalesce(rule.max_lease_expiries, ?::int) AS max_expiries, job.attempts, job.max_attempts,
                       rule.initial_ms, rule.multiplier, rule.max_ms, rule.jitter
                FROM expired
                JOIN {job} AS job ON job.id = expired.id
                LEFT JOIN rule ON rule.queue = expired.queue
            ), recovered AS (
                SELECT counted.*,
                       counted.max_expiries > 0 AS apart,
                       CASE WHEN counted.max_expiries > 0 THEN counted.expiries >= counted.max_expiries
                            ELSE counted.attempts >= counted.max_attempts END AS dead,
                       """ + StatementParts.backoffMillis("coalesce(counted.max_ms, ?::bigint)",
                    "coalesce(counted.initial_ms, ?::bigint)", "coalesce(counted.multiplier, ?::float8)",
                    "CASE WHEN counted.max_expiries > 0 THEN counted.expiries - 1"
                            + " ELSE greatest(counted.attempts - 1, 0) END",
                    "coalesce(counted.jitter, ?::float8)") + """
                           AS delay_ms
                FROM counted
            )
            UPDATE {job} AS job
            SET status = CASE WHEN recovered.dead THEN 'dead'
                              WHEN recovered.delay_ms > 0 THEN 'scheduled' ELSE 'pending' END,
                attempts = CASE WHEN recovered.apart THEN greatest(job.attempts - 1, 0) ELSE job.attempts END,
                lease_expiries = recovered.expiries,
                finished_at = CASE WHEN recovered.dead THEN clock_timestamp() END,
                run_at = CASE WHEN recovered.dead THEN job.run_at
                              ELSE clock_timestamp() + recovered.delay_ms * interval '1 millisecond' END,
                last_error = CASE WHEN recovered.dead AND recovered.apart
                                  THEN 'lease expired ' || recovered.expiries || ' times; last held by '
                                       || recovered.claimed_by
                                  ELSE 'lease expired while held by ' || recovered.claimed_by END,
                last_error_at = clock_timestamp(),
                claimed_by = NULL,
                lease_expires_at = NULL,
                lease_token = NULL,
                updated_at = clock_timestamp()
            FROM recovered
            WHERE job.id = recovered.id
            RETURNING job.id, job.queue, job.status, recovered.claimed_by AS previous_owner,
                      job.attempts, job.max_attempts, job.lease_expiries
            """;

    /**
     * Makes scheduled jobs that have fallen due pending, oldest first, and wakes their queues'
     * pollers on every node (one notification per queue). Served by workrow_job_scheduled_idx;
     * SKIP LOCKED lets every runtime run it at once.
     */
    static final String JOB_PROMOTE_SCHEDULED = """
            WITH due AS (
                SELECT id
                FROM {job}
                WHERE status = 'scheduled' AND run_at <= statement_timestamp()
                ORDER BY run_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), promoted AS (
                UPDATE {job} AS job
                SET status = 'pending', updated_at = clock_timestamp()
                FROM due
                WHERE job.id = due.id
                RETURNING job.queue
            )
            SELECT queue, count(*) AS jobs, pg_notify({channel}, queue)
            FROM promoted
            GROUP BY queue
            """;

    /**
     * Moves pending or scheduled jobs whose attempts reached max_attempts to dead (for example after an operator
     * lowered max_attempts). Served by workrow_job_exhausted_idx, which holds only such rows and
     * so is empty nearly always: every node runs this often, and must not read the backlog.
     */
    static final String JOB_RETIRE_EXHAUSTED = """
            WITH exhausted AS (
                SELECT id
                FROM {job}
                WHERE status IN ('pending', 'scheduled') AND attempts >= max_attempts
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            )
            UPDATE {job} AS job
            SET status = 'dead',
                finished_at = clock_timestamp(),
                last_error = coalesce(job.last_error, 'attempts exhausted'),
                last_error_at = clock_timestamp(),
                updated_at = clock_timestamp()
            FROM exhausted
            WHERE job.id = exhausted.id
            RETURNING job.id, job.queue, job.attempts, job.max_attempts
            """;

    /**
     * Deletes one batch of finished jobs of one status older than the retention. Served by
     * workrow_job_finished_idx (status, finished_at): the literal status list repeats the index's
     * predicate so that a generic plan, where the status is only a parameter, can still use it, and
     * the cutoff uses the stable {@code statement_timestamp()}, since a volatile
     * {@code clock_timestamp()} cannot be an index condition. Oldest first, in index order, so a
     * pass never wades through the rows earlier passes deleted. Small batches keep each delete's
     * locks and WAL short.
     */
    static final String JOB_PRUNE_FINISHED = """
            WITH old AS (
                SELECT id
                FROM {job}
                WHERE status IN ('completed', 'dead', 'cancelled')
                  AND status = ? AND finished_at < statement_timestamp() - ? * interval '1 millisecond'
                ORDER BY status, finished_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            )
            DELETE FROM {job} AS job
            USING old
            WHERE job.id = old.id
            """;

    /**
     * Open work per queue, for QueueAdmin.stats, the dashboard, gauges and health: pending (with
     * how many are due and the age of the oldest due job), scheduled, running and dead. One arm
     * per status so that each walks its partial index: index-only for pending (the two claim
     * indexes), scheduled (workrow_job_scheduled_queue_idx) and dead (workrow_job_dead_idx); a
     * row per running job through workrow_job_lease_idx, which has no queue. Finished rows, the
     * bulk of the table, are never read, so the cost follows open work and dead jobs, not
     * history. Counts of completed and cancelled jobs are not here for that reason (the
     * workrow_queue_stats view has them, reading every row; JOB_FINISHED_PER_MINUTE reads the
     * recent ones).
     */
    static final String QUEUE_DEPTH = """
            SELECT queue, 'pending' AS status, sum(jobs) AS jobs, sum(due) AS due,
                   coalesce(extract(epoch FROM now() - min(oldest_due)), 0) AS lag_seconds
            FROM (SELECT queue, count(*) AS jobs, count(*) FILTER (WHERE run_at <= now()) AS due,
                         min(run_at) FILTER (WHERE run_at <= now()) AS oldest_due
                  FROM {job} AS job WHERE job.status = 'pending' AND {unkeyed} GROUP BY queue
                  UNION ALL
                  SELECT queue, count(*), count(*) FILTER (WHERE run_at <= now()),
                         min(run_at) FILTER (WHERE run_at <= now())
                  FROM {job} AS job WHERE job.status = 'pending' AND {keyed} GROUP BY queue) AS pending
            GROUP BY queue
            UNION ALL
            SELECT queue, 'scheduled', count(*), 0, 0 FROM {job} WHERE status = 'scheduled' GROUP BY queue
            UNION ALL
            SELECT queue, 'running', count(*), 0, 0 FROM {job} WHERE status = 'running' GROUP BY queue
            UNION ALL
            SELECT queue, 'dead', count(*), 0, 0 FROM {job} WHERE status = 'dead' GROUP BY queue
            """;

    /**
     * Whether the database answers and Workrow's table is there and readable: a health probe that
     * reads no rows (LIMIT 0 plans the scan and never runs it).
     */
    static final String JOB_TABLE_CHECK = """
            SELECT 1 FROM {job} LIMIT 0
            """;

    /** Pauses a queue on every node; pausing again replaces the reason. */
    static final String QUEUE_PAUSE = """
            INSERT INTO {pause} (queue, reason) VALUES (?, ?)
            ON CONFLICT (queue) DO UPDATE SET reason = excluded.reason
            """;

    /** Resumes a queue and wakes its pollers at once. */
    static final String QUEUE_RESUME = """
            WITH resumed AS (
                DELETE FROM {pause} WHERE queue = ? RETURNING queue
            )
            SELECT queue, pg_notify({channel}, queue) FROM resumed
            """;

    /** The paused queues. */
    static final String QUEUE_PAUSED = """
            SELECT queue FROM {pause} ORDER BY queue
            """;

    /**
     * Running jobs, optionally of one queue, oldest claim first. Served by workrow_job_lease_idx
     * (its predicate is repeated literally, so generic plans use it too).
     */
    static final String JOB_LIST_RUNNING = """
            SELECT id, queue, status, attempts, max_attempts, claimed_by, lease_expires_at, run_at,
                   last_error, last_error_at, created_at, lease_expiries
            FROM {job}
            WHERE status = 'running'
              AND (?::text IS NULL OR queue = ?)
            ORDER BY started_at, id
            LIMIT ?
            """;

    /**
     * Dead jobs, optionally of one queue and with an error containing a text, most recently dead
     * first. Served by workrow_job_finished_idx (status, finished_at) in its order, so the walk
     * stops at the limit whatever the queue filter.
     */
    static final String JOB_LIST_DEAD = """
            SELECT id, queue, status, attempts, max_attempts, claimed_by, lease_expires_at, run_at,
                   last_error, last_error_at, created_at, lease_expiries
            FROM {job}
            WHERE status = 'dead'
              AND (?::text IS NULL OR queue = ?)
              AND (?::text IS NULL OR strpos(lower(last_error), lower(?)) > 0)
            ORDER BY status, finished_at DESC
            LIMIT ?
            """;


    /**
     * The kind of a dead job's error, which the dashboard groups by and retries by: last_error up
     * to its first colon (the exception's class, with the default error describer), the engine's
     * lease expiries as one kind whichever worker held the job, '' for no error. The same
     * expression is indexed (V10, workrow_job_dead_kind_idx): change both or neither.
     */
    private static final String ERROR_KIND = """
            CASE WHEN last_error IS NULL THEN ''
                 WHEN last_error LIKE 'lease expired %' THEN 'lease expired'
                 ELSE split_part(last_error, ':', 1) END""";

    /**
     * Dead jobs grouped by queue and kind of error, largest group first. Every kind is listed,
     * found by a skip scan of workrow_job_dead_kind_idx (one probe per kind, at most
     * {@link #DEAD_KINDS_LISTED} kinds), but jobs are counted only among the newest dead jobs (at
     * most the first parameter's number): a walk of workrow_job_finished_idx in its order
     * (status, finished_at) that stops there, so a dead list of millions costs what a few
     * thousand do. A kind with no job among those newest has the count 0. The groups returned
     * (the second parameter's number) read their newest five as the first entries of their own
     * range of workrow_job_dead_kind_idx. {@link #JOB_DEAD_ERROR_GROUPS_OF_QUEUE} is the same for
     * one queue.
     */
    static final String JOB_DEAD_ERROR_GROUPS = deadErrorGroups("", "{dead_order}");

    /**
     * {@link #JOB_DEAD_ERROR_GROUPS} for one queue (the first three parameters, the same queue
     * each), sampling through workrow_job_dead_idx (queue, finished_at), so that a queue with few
     * dead jobs among many does not read the others'.
     */
    static final String JOB_DEAD_ERROR_GROUPS_OF_QUEUE = deadErrorGroups("AND queue = ?", "queue");

    /** The most kinds of error {@link #JOB_DEAD_ERROR_GROUPS} lists, however many there are. */
    static final int DEAD_KINDS_LISTED = 1000;

    private static String deadErrorGroups(String queueFilter, String sampleOrder) {
        return """
                WITH RECURSIVE kinds AS (
                    (SELECT queue, {error_kind} AS error
                     FROM {dead_jobs}
                     WHERE {is_dead} {queue_filter}
                     ORDER BY queue, {error_kind}
                     LIMIT 1)
                    UNION ALL
                    SELECT next.queue, next.error
                    FROM kinds
                    CROSS JOIN LATERAL (
                        SELECT queue, {error_kind} AS error
                        FROM {dead_jobs}
                        WHERE {is_dead} {queue_filter}
                          AND (queue, {error_kind}) > (kinds.queue, kinds.error)
                        ORDER BY queue, {error_kind}
                        LIMIT 1
                    ) AS next
                ), newest AS (
                    SELECT queue, {error_kind} AS error, finished_at
                    FROM {dead_jobs}
                    WHERE {is_dead} {queue_filter}
                    ORDER BY {sample_order}, finished_at DESC
                    LIMIT ?
                ), sampled AS (
                    SELECT queue, error, count(*) AS jobs, max(finished_at) AS last_died_at
                    FROM newest
                    GROUP BY queue, error
                ), grouped AS (
                    SELECT queue, error, coalesce(sampled.jobs, 0) AS jobs
                    FROM (SELECT queue, error FROM kinds LIMIT {kinds_listed}) AS listed
                    FULL JOIN sampled USING (queue, error)
                    ORDER BY jobs DESC, sampled.last_died_at DESC NULLS LAST, queue, error
                    LIMIT ?
                )
                SELECT grouped.queue, grouped.error, grouped.jobs, newest.last_died_at, newest.newest_ids,
                       newest.example
                FROM grouped
                CROSS JOIN LATERAL (
                    SELECT max(finished_at) AS last_died_at,
                           array_agg(id ORDER BY finished_at DESC, id DESC) AS newest_ids,
                           (array_agg(last_error ORDER BY finished_at DESC, id DESC))[1] AS example
                    FROM (SELECT id, finished_at, last_error
                          FROM {dead_jobs}
                          WHERE {is_dead} AND queue = grouped.queue AND {error_kind} = grouped.error
                          ORDER BY finished_at DESC, id DESC
                          LIMIT 5) AS five
                ) AS newest
                ORDER BY grouped.jobs DESC, newest.last_died_at DESC, grouped.queue, grouped.error
                """.replace("{queue_filter}", queueFilter).replace("{sample_order}", sampleOrder)
                .replace("{kinds_listed}", Integer.toString(DEAD_KINDS_LISTED));
    }

    /** One job's whole row, by its primary key. */
    static final String JOB_FIND = """
            SELECT id, queue, status, partition_key, fairness_key, idempotency_key, priority, payload::text AS payload,
                   headers::text AS headers, run_at, attempts, max_attempts, lease_expiries, last_error,
                   last_error_at, step, claimed_by, lease_expires_at, created_at, started_at, finished_at, updated_at
            FROM {job}
            WHERE id = ?
            """;

    /**
     * Jobs finished per queue and minute from the minute of ? (at most a day back): one range of
     * workrow_job_finished_idx (status, finished_at) per status, and a heap read per job for its
     * queue, so callers ask for the minutes they have not seen rather than the whole hour again.
     */
    static final String JOB_FINISHED_PER_MINUTE = """
            SELECT queue, date_trunc('minute', finished_at, 'UTC') AS minute,
                   count(*) FILTER (WHERE status = 'completed') AS completed,
                   count(*) FILTER (WHERE status = 'dead') AS dead
            FROM {job}
            WHERE status IN ('completed', 'dead')
              AND finished_at >= date_trunc('minute', greatest(?::timestamptz, now() - interval '1 day'), 'UTC')
            GROUP BY 1, 2
            ORDER BY minute, queue
            """;

    /**
     * Puts one batch of dead jobs back to pending with fresh attempts, due now, and wakes their
     * queues' pollers (the insert trigger does not see updates). The last error stays for the
     * record. At most the last parameter's number of rows, so that retrying a group of a million
     * is many short statements, each well inside the statement timeout; the caller repeats until a
     * batch comes back short. Only rows unchanged since the cutoff (the database's time when the
     * caller began) are taken, so a job retried by an earlier batch that died again meanwhile is
     * not retried twice by one call. Rows locked elsewhere are left to the next call.
     */
    static final String JOB_RETRY_DEAD = """
            WITH batch AS (
                SELECT id
                FROM {job}
                WHERE status = 'dead'
                  AND (?::bigint[] IS NULL OR id = ANY(?::bigint[]))
                  AND (?::text IS NULL OR queue = ?)
                  AND (?::text IS NULL OR strpos(lower(last_error), lower(?)) > 0)
                  AND (?::text IS NULL OR {error_kind} = ?)
                  AND updated_at <= ?::timestamptz
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), retried AS (
                UPDATE {job} AS job
                SET status = 'pending', attempts = 0, lease_expiries = 0, run_at = now(), finished_at = NULL,
                    updated_at = now()
                FROM batch
                WHERE job.id = batch.id
                RETURNING job.queue
            ), woken AS (
                SELECT pg_notify({channel}, queue) FROM (SELECT DISTINCT queue FROM retried) AS q
            )
            SELECT (SELECT count(*) FROM retried) AS retried, (SELECT count(*) FROM woken) AS queues
            """;

    /**
     * Cancels one batch of dead jobs of one queue (they stay, as cancelled, until retention
     * prunes them, counted from finished_at, when they died): those in the id array when it is not
     * null, of one kind of error when that is not null. Batched as {@link #JOB_RETRY_DEAD} is.
     */
    static final String JOB_CANCEL_DEAD = """
            WITH batch AS (
                SELECT id
                FROM {job}
                WHERE status = 'dead'
                  AND (?::bigint[] IS NULL OR id = ANY(?::bigint[]))
                  AND queue = ?
                  AND (?::text IS NULL OR {error_kind} = ?)
                  AND updated_at <= ?::timestamptz
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            )
            UPDATE {job} AS job
            SET status = 'cancelled', updated_at = now()
            FROM batch
            WHERE job.id = batch.id
            """;

    /**
     * Cancels a scheduled, pending or running job of one queue. Clearing the token fences out a running
     * handler's result; the notification ({@code cancel:<id>}, which no queue name can be) tells
     * the runtime holding it to interrupt the handler at once rather than at its next renewal.
     */
    static final String JOB_CANCEL = """
            WITH target AS (
                SELECT id, status FROM {job} WHERE id = ? AND queue = ? FOR UPDATE
            ), cancelled AS (
                UPDATE {job} AS job
                SET status = 'cancelled', finished_at = clock_timestamp(), lease_expires_at = NULL,
                    lease_token = NULL, updated_at = clock_timestamp()
                FROM target
                WHERE job.id = target.id AND target.status IN ('scheduled', 'pending', 'running')
                RETURNING job.id, target.status AS previous_status
            )
            SELECT id, CASE WHEN previous_status = 'running' THEN pg_notify({channel}, 'cancel:' || id) END
            FROM cancelled
            """;

    /** The database's time: where a batched operator write takes its cutoff. */
    static final String DATABASE_NOW = """
            SELECT statement_timestamp()
            """;

    /** Replaces the table, view and sequence placeholders with quoted names in {@code schema}. */
    static String render(String sql, SqlIdentifier schema) {
        return sql.replace("{waiting}", "{job}").replace("{pending}", "job.status = 'pending'")
                .replace("{dead_jobs}", "{job}").replace("{is_dead}", "status = 'dead'").replace("{dead_order}", "status")
                .replace("{lock_match}", "job.id = candidate.id")
                .replace("{error_kind}", ERROR_KIND).replace("{unkeyed}", UNKEYED).replace("{keyed}", KEYED)
                .replace("{channel}", "'" + NotifyChannel.of(schema) + "'")
                .replace("{job}", schema.quoted() + ".workrow_job")
                .replace("{pause}", schema.quoted() + ".workrow_queue_pause")
                .replace("{breaker}", schema.quoted() + ".workrow_breaker")
                .replace("{worker}", schema.quoted() + ".workrow_worker")
                .replace("{recurring}", schema.quoted() + ".workrow_recurring")
                .replace("{fairness_key}", schema.quoted() + ".workrow_fairness_key")
                .replace("{fairness_state}", schema.quoted() + ".workrow_fairness_state")
                .replace("{lease_holder}", schema.quoted() + ".workrow_lease_holder")
                .replace("{queue_rule}", schema.quoted() + ".workrow_queue_rule")
                .replace("{lease_token_seq}", "'" + schema.quoted() + ".workrow_lease_token_seq'");
    }
}

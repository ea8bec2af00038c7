package io.workrow.queue.store;

/**
 * Every statement of Workrow's jobs, in the write-once layout (docs/storage-layout.md; its tables
 * come from {@code V13}), one named text block each, mirrored by the {@link WriteOnceStore} method
 * of the same name, and the placeholders the other stores' statements share ({@link #render}).
 *
 * <p><b>One home per job.</b> A job's state is which table holds its live row: scheduled, ready,
 * an open position of a claim (neither its {@code settled} nor its {@code dropped} bit set), dead,
 * or a terminal outcome row. Every move takes the job out of its home and writes the destination
 * only from what that {@code DELETE} or bit update returned, so two statements racing for one job
 * (a cancel and a sweep, say) can never both move it: under READ COMMITTED the one that waited
 * re-checks the row, finds it gone or its bit set, and writes nothing.
 *
 * <p><b>The fence is the claim row.</b> An end names its claim's token and its position in it; it
 * is accepted while the claim row exists and the position is open. A swept claim is deleted, a
 * cancelled position has its {@code dropped} bit set, and an accepted end sets the {@code settled}
 * bit, so a resent end is refused too, and is told from a lost lease by its own outcome row.
 */
final class JobSql {

    private static final String UNKEYED = "ready.partition_key IS NULL AND ready.fairness_key = ''";

    private static final String KEYED = "(ready.partition_key IS NOT NULL OR ready.fairness_key <> '')";

    /**
     * A claimable job, aliased {@code job}, without a partition or fairness key, as the claim parts of
     * {@link StatementParts} name it ({@code {unkeyed}}); with {@link #JOB_ALIAS_KEYED}, every claimable job.
     */
    private static final String JOB_ALIAS_UNKEYED = "job.partition_key IS NULL AND job.fairness_key = ''";

    /** A claimable job, aliased {@code job}, with a partition or fairness key ({@code {keyed}}). */
    /** A ready or scheduled row ({@code {home}}) of a job that never started: no attempt, snooze or expiry counted. */
    private static final String NEVER_STARTED =
            "({home}.attempts = 0 AND {home}.expiries = 0 AND {home}.snoozes IS NULL)";

    private static final String JOB_ALIAS_KEYED = "(job.partition_key IS NOT NULL OR job.fairness_key <> '')";

    /** A stopping runtime vouches for no lease any more: what it still holds expires as usual. */
    static final String LEASE_HOLDER_FORGET = """
            DELETE FROM {lease_holder} WHERE worker = ?
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
     * Whether a queue has jobs due and unclaimed, by the prefixes of its two claim indexes (keyless
     * and keyed, which together hold every ready row): asked by a node whose share of the queue's
     * cluster-wide cap gives it no slot, instead of claiming a job it could not start.
     */
    static final String QUEUE_HAS_READY = """
            SELECT (SELECT ready.id FROM {ready} AS ready
                    WHERE ready.queue = ? AND {ready_unkeyed} AND ready.run_at <= now()
                    ORDER BY ready.priority, ready.run_at, ready.id LIMIT 1) IS NOT NULL
                OR (SELECT ready.id FROM {ready} AS ready
                    WHERE ready.queue = ? AND {ready_keyed} AND ready.run_at <= now()
                    ORDER BY ready.priority, ready.run_at, ready.id LIMIT 1) IS NOT NULL
            """;

    /**
     * The kind of a dead job's error, which the dashboard groups by and retries by: last_error up
     * to its first colon (the exception's class, with the default error describer), the engine's
     * lease expiries as one kind whichever worker held the job, '' for no error. The same
     * expression is indexed (V13, workrow_dead_kind_idx): change both or neither.
     */
    private static final String ERROR_KIND = """
            CASE WHEN last_error IS NULL THEN ''
                 WHEN last_error LIKE 'lease expired %' THEN 'lease expired'
                 ELSE split_part(last_error, ':', 1) END""";

    /**
     * Dead jobs grouped by queue and kind of error, largest group first. Every kind is listed,
     * found by a skip scan of workrow_dead_kind_idx (one probe per kind, at most
     * {@link #DEAD_KINDS_LISTED} kinds), but jobs are counted only among the newest dead jobs (at
     * most the first parameter's number): a backward walk of workrow_dead_finished_idx that stops
     * there, so a dead list of millions costs what a few thousand do. A kind with no job among
     * those newest has the count 0. The groups returned (the second parameter's number) read their newest five as the
     * first entries of their own range of workrow_dead_kind_idx.
     * {@link #JOB_DEAD_ERROR_GROUPS_OF_QUEUE} is the same for one queue.
     */
    static final String JOB_DEAD_ERROR_GROUPS = deadErrorGroups("", "finished_at DESC");

    /**
     * {@link #JOB_DEAD_ERROR_GROUPS} for one queue (the first three parameters, the same queue
     * each), sampling through workrow_dead_queue_idx (queue, finished_at), so that a queue with few
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

    /**
     * The fence of every end: the claim rows named by the tokens ({@code ?::bigint[]}), locked
     * {@code SKIP LOCKED} so one row held elsewhere never stalls the other claims' ends.
     */
    private static final String LOCKED_CLAIMS = """
            ), locked AS (
                SELECT claim.token, claim.queue, claim.worker, claim.started_at, claim.settled, claim.dropped,
                       claim.has_keys, claim.has_steps, claim.waited_on
                FROM {claim} AS claim
                WHERE claim.token = ANY (?::bigint[])
                FOR UPDATE SKIP LOCKED""";

    /**
     * Sets the accepted positions' {@code settled} bits, or deletes a claim row left with no open
     * position: disjoint rows, so one statement does both.
     */
    private static final String SETTLE = """
            ), marked AS MATERIALIZED (
                SELECT locked.token, locked.settled | bit_or(set_bit(locked.settled # locked.settled,
                                                                    accepted.position - 1, 1)) AS settled,
                       locked.dropped
                FROM accepted
                JOIN locked ON locked.token = accepted.token
                GROUP BY locked.token, locked.settled, locked.dropped
            ), settled AS (
                UPDATE {claim} AS claim
                SET settled = marked.settled
                FROM marked
                WHERE claim.token = ANY (ARRAY(SELECT token FROM marked))
                  AND claim.token = marked.token AND position('0' IN (marked.settled | marked.dropped)::text) > 0
            ), closed AS (
                DELETE FROM {claim} AS claim
                WHERE claim.token = ANY (ARRAY(SELECT token FROM marked
                                               WHERE position('0' IN (marked.settled | marked.dropped)::text) = 0))""";

    /**
     * The step a job saved, read for the outcome row of its last attempt before the statement's
     * other part deletes it (both see the statement's snapshot), so a finished job shows its step.
     */
    private static final String SAVED_STEP = "(SELECT saved.step FROM {step} AS saved WHERE saved.job_id = id)";

    /** Drops the ordered keys of accepted positions, for claims flagged to hold any. */
    private static final String DROP_KEYS = """
            ), keys AS (
                DELETE FROM {key_running} AS key
                USING accepted
                WHERE accepted.has_keys AND key.claim_token = accepted.token AND key.job_id = accepted.id""";

    /**
     * Every end's verdict besides its status: its claim row there but locked elsewhere
     * ({@code busy}), or an outcome this claim already logged for the job ({@code ended}: an earlier
     * send committed and its reply was lost).
     */
    private static final String VERDICTS = """
            accepted.id IS NULL AND input.token NOT IN (SELECT token FROM locked)
                       AND EXISTS (SELECT 1 FROM {claim} AS claim WHERE claim.token = input.token) AS busy,
                   CASE WHEN accepted.id IS NOT NULL OR {workflow_verdict} THEN false ELSE {ended} END AS ended,
                   accepted.id IS NULL AND {workflow_verdict} AS workflow
            FROM input
            LEFT JOIN accepted ON accepted.token = input.token AND accepted.position = input.position""";

    /**
     * An outcome this claim already logged for the job that this very end would have written: its
     * own earlier send, whose reply was lost. The kind must match: a completion arriving after the
     * shutdown interrupted the job (logged {@code released}) is a late end to refuse, not a resend.
     * The sweeper's rows ({@code expired}) match no end but a let-go, which the sweeper's expiry
     * equals; a cancel's ({@code cancelled}) none but a deadline's, whose error says so.
     */
    private static final String ENDED_BEFORE = """
            EXISTS (SELECT 1 FROM {outcome} AS outcome
                           WHERE outcome.claim_token = input.token AND outcome.job_id = input.id
                             AND outcome.status = ANY (CASE input.kind
                                 WHEN 'completed' THEN ARRAY['completed']
                                 WHEN 'failed' THEN ARRAY['failed', 'dead']
                                 WHEN 'discarded' THEN ARRAY['dead']
                                 WHEN 'released' THEN ARRAY['released']
                                 WHEN 'interrupted' THEN ARRAY['released', 'dead']
                                 WHEN 'snoozed' THEN ARRAY['snoozed']
                                 WHEN 'past_deadline' THEN ARRAY['cancelled']
                                 ELSE ARRAY['expired'] END)
                             AND (input.kind <> 'past_deadline' OR outcome.error LIKE 'expired: %'))""";

    /**
     * The lean ends' gate: a position whose job others wait on ({@code waited_on} bit set on the
     * locked claim row, its newest version) is left open and answered {@code workflow}, to be ended
     * by the workflow variant of the end, which settles its dependents in the same transaction.
     */
    private static final String WORKFLOW_GATE =
            "AND (locked.waited_on IS NULL OR get_bit(locked.waited_on, input.position - 1) = 0)";

    /** A position the gate left open: its claim row locked here, the position open and waited on. */
    private static final String WORKFLOW_VERDICT = """
            EXISTS (SELECT 1 FROM locked WHERE locked.token = input.token
                                  AND get_bit(locked.settled, input.position - 1) = 0
                                  AND get_bit(locked.dropped, input.position - 1) = 0
                                  AND locked.waited_on IS NOT NULL
                                  AND get_bit(locked.waited_on, input.position - 1) = 1)""";

    private JobSql() {
    }

    /**
     * Enqueues many jobs from parallel arrays: each gets its id first, keyed ones claim their
     * (queue, key) in workrow_job_key in (queue, key) order (concurrent producers sharing keys wait
     * in line, not in a circle), and only jobs without a key or whose key was free write their data
     * and their state's row, ready when due, scheduled when later. Returns the new jobs with their
     * input position ({@code ord}); a job whose key was taken returns nothing and is looked up with
     * {@link #JOB_FIND_BY_IDEMPOTENCY_KEYS}. A delay counts from this statement.
     */
    static final String JOB_INSERT_MANY = """
            WITH {new_jobs}, {fresh_jobs}, {homes}
            SELECT id, ord FROM fresh
            """.replace("{homes}", homesOf("fresh"));

    /**
     * {@link #JOB_INSERT_MANY} for a batch in which no job has an idempotency key: nothing to claim
     * first, so the input is written as it is, without a second copy of its payloads.
     */
    static final String JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS = """
            WITH {new_jobs}, {homes}
            SELECT id, ord FROM input
            """.replace("{homes}", homesOf("input"));

    /**
     * The jobs a dependent enqueue names ({@code ?::bigint[]}): those that do not exist (never
     * enqueued, deleted, or their data past retention), and the oldest enqueue time of those that
     * do, the bound of {@link #JOB_INSERT_MANY_AFTER}'s look into the outcome log.
     */
    static final String JOB_DEPENDENCIES_CHECK = """
            SELECT array_agg(wanted.id ORDER BY wanted.id) FILTER (WHERE data.id IS NULL) AS unknown,
                   min(data.created_at) AS since
            FROM unnest(?::bigint[]) AS wanted(id)
            LEFT JOIN {job_data} AS data ON data.id = wanted.id
            """;

    /*
     * The outcome log is read for many jobs at once as "job_id BETWEEN the lowest AND the highest
     * (the log's BRIN) AND (job_id IN (SELECT the ids)) IS TRUE". IS TRUE keeps the IN a hashed
     * subplan: pulled up into a join, the planner guesses ten ids for the array (a parameter's
     * length is unknown to a generic plan) and may loop over all of them for every row; "= ANY"
     * of the array compares them one by one (docs/performance.md, "Workflows", has the timings).
     */

    /**
     * Of the jobs {@code ?::bigint[]}, whose data exists, those in no home and with no end on or
     * after {@code ?} (their oldest enqueue time): finished with their history past retention, so
     * whether they completed is no longer known. Their dependents are refused as for unknown ids.
     */
    static final String JOB_DEPENDENCIES_GONE = """
            WITH wanted AS MATERIALIZED (
                SELECT DISTINCT id FROM unnest(?::bigint[]) AS wanted(id)
            ), bounds AS MATERIALIZED (
                SELECT min(id) AS low, max(id) AS high FROM wanted
            ), found AS MATERIALIZED (
                SELECT home.id FROM {ready} AS home
                WHERE home.id BETWEEN (SELECT low FROM bounds) AND (SELECT high FROM bounds)
                  AND (home.id IN (SELECT id FROM wanted)) IS TRUE
                UNION ALL
                SELECT home.id FROM {scheduled} AS home
                WHERE home.id BETWEEN (SELECT low FROM bounds) AND (SELECT high FROM bounds)
                  AND (home.id IN (SELECT id FROM wanted)) IS TRUE
                UNION ALL
                SELECT home.id FROM {waiting} AS home WHERE home.id = ANY (ARRAY(SELECT id FROM wanted))
                UNION ALL
                SELECT home.id FROM {dead} AS home WHERE home.id = ANY (ARRAY(SELECT id FROM wanted))
                UNION ALL
                SELECT held.id
                FROM {claim} AS claim
                CROSS JOIN LATERAL unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                WHERE get_bit(claim.settled, held.position::int - 1) = 0
                  AND get_bit(claim.dropped, held.position::int - 1) = 0
                  AND (held.id IN (SELECT id FROM wanted)) IS TRUE
                UNION ALL
                SELECT outcome.job_id FROM {outcome} AS outcome
                WHERE outcome.job_id BETWEEN (SELECT low FROM bounds) AND (SELECT high FROM bounds)
                  AND (outcome.job_id IN (SELECT id FROM wanted)) IS TRUE
                  AND outcome.status IN ('completed', 'cancelled') AND outcome.finished_at >= ?::timestamptz
            )
            SELECT array_agg(wanted.id ORDER BY wanted.id) AS gone
            FROM wanted
            WHERE wanted.id NOT IN (SELECT id FROM found)
            """;

    /**
     * {@link #JOB_INSERT_MANY} for a batch in which jobs wait for others: after the eleven arrays,
     * each job's dependencies as three parallel arrays (the job's input position, the dependency,
     * whether any end of it releases the job: {@code afterSettled}), then the oldest enqueue time
     * of the dependencies ({@link #JOB_DEPENDENCIES_CHECK}). A dependency listed both ways counts
     * as {@code after}. Dependencies ended at this snapshot are met (completed, or any end for
     * {@code afterSettled}) or cancel the job at once ({@code after} a dead or cancelled job: a
     * cancelled outcome naming it); a job with dependencies still live waits in workrow_waiting with
     * their count and one edge each, to be registered at commit; the others are ready or scheduled
     * as without dependencies. Live is anything not ended: queued, waiting, running, or enqueued
     * earlier in this transaction.
     */
    static final String JOB_INSERT_MANY_AFTER = """
            WITH {new_jobs}, {fresh_jobs}, listed AS MATERIALIZED (
                SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::boolean[]) WITH ORDINALITY
                              AS listed(ord, dep_id, settled, n)
            ), wanted AS MATERIALIZED (
                SELECT ord, dep_id, bool_and(settled) AS settled FROM listed GROUP BY ord, dep_id
            ), ended AS MATERIALIZED (
                SELECT dead.id AS dep_id, 'dead' AS how FROM {dead} AS dead
                WHERE dead.id = ANY (ARRAY(SELECT DISTINCT dep_id FROM wanted))
                UNION ALL
                SELECT outcome.job_id, outcome.status FROM {outcome} AS outcome
                WHERE outcome.job_id BETWEEN (SELECT min(dep_id) FROM wanted) AND (SELECT max(dep_id) FROM wanted)
                  AND (outcome.job_id IN (SELECT dep_id FROM wanted)) IS TRUE
                  AND outcome.status IN ('completed', 'cancelled') AND outcome.finished_at >= ?::timestamptz
            ), fate AS MATERIALIZED (
                SELECT fresh.id, count(wanted.dep_id) FILTER (WHERE ended.how IS NULL)::int AS live,
                       min(wanted.dep_id) FILTER (WHERE NOT wanted.settled AND ended.how IS NOT NULL
                                                    AND ended.how <> 'completed') AS failed_by
                FROM fresh
                LEFT JOIN wanted ON wanted.ord = fresh.ord
                LEFT JOIN ended ON ended.dep_id = wanted.dep_id
                GROUP BY fresh.id
            ), placed AS MATERIALIZED (
                SELECT fresh.*, fate.live,
                       CASE WHEN fate.failed_by IS NULL THEN NULL
                            WHEN (SELECT how FROM ended WHERE ended.dep_id = fate.failed_by) = 'dead'
                            THEN 'dependency ' || fate.failed_by || ' is dead'
                            ELSE 'dependency ' || fate.failed_by || ' was cancelled' END AS failed_why,
                       CASE WHEN fate.failed_by IS NOT NULL THEN 'cancelled' WHEN fate.live > 0 THEN 'waiting'
                            WHEN fresh.run_at <= statement_timestamp() THEN 'pending' ELSE 'scheduled' END AS home
                FROM fresh JOIN fate ON fate.id = fresh.id
            ), lists AS (
                SELECT ord, array_agg(dep_id ORDER BY n) FILTER (WHERE NOT settled) AS after_ids,
                       array_agg(dep_id ORDER BY n) FILTER (WHERE settled AND NOT after_too) AS after_settled_ids
                FROM (SELECT listed.*, bool_or(NOT settled) OVER (PARTITION BY ord, dep_id) AS after_too
                      FROM listed) AS marked
                GROUP BY ord
            ), data AS (
                INSERT INTO {job_data} (id, queue, partition_key, partition_bucket, priority, idempotency_key,
                                        payload, headers, max_attempts, fairness_key, after_ids, after_settled_ids,
                                        batch_id, expires_at, timeout_ms)
                SELECT placed.id, placed.queue, placed.partition_key, placed.partition_bucket, placed.priority,
                       placed.idempotency_key, placed.payload::jsonb, placed.headers::jsonb, placed.max_attempts,
                       placed.fairness_key, lists.after_ids, lists.after_settled_ids, {batch_id}, placed.expires_at,
                       placed.timeout_ms
                FROM placed LEFT JOIN lists ON lists.ord = placed.ord
            ), due AS (
                INSERT INTO {ready} (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                     fairness_key, waited_on)
                SELECT id, queue, priority, run_at, max_attempts, partition_key, partition_bucket, fairness_key,
                       {member}
                FROM placed WHERE home = 'pending'
            ), later AS (
                INSERT INTO {scheduled} (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                         fairness_key, waited_on)
                SELECT id, queue, priority, run_at, max_attempts, partition_key, partition_bucket, fairness_key,
                       {member}
                FROM placed WHERE home = 'scheduled'
            ), held AS (
                INSERT INTO {waiting} (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                       fairness_key, deps_left, unregistered, waited_on)
                SELECT id, queue, priority, run_at, max_attempts, partition_key, partition_bucket, fairness_key,
                       live, true, {member}
                FROM placed WHERE home = 'waiting'
            ), edges AS (
                INSERT INTO {dependency} (dep_id, waiter_id, settled)
                SELECT wanted.dep_id, placed.id, wanted.settled
                FROM placed
                JOIN wanted ON wanted.ord = placed.ord
                WHERE placed.home = 'waiting' AND wanted.dep_id NOT IN (SELECT dep_id FROM ended)
            ), born_cancelled AS (
                INSERT INTO {outcome} (job_id, attempt, queue, status, run_at, finished_at, error, error_at)
                SELECT id, 0, queue, 'cancelled', run_at, clock_timestamp(), failed_why, clock_timestamp()
                FROM placed WHERE home = 'cancelled'
            )
            SELECT id, ord, home FROM placed
            """;

    /**
     * Opens a batch ({@code workrow_batch}, V16) in the enqueue's transaction with its callbacks
     * ({@code onSuccess}, {@code onFinish}, each optional: the parallel arrays of one or two jobs,
     * with the kind of each), held in workrow_waiting until the batch is done, with no edge: only
     * the batch releases them. Returns the batch's id and each callback's id by kind.
     */
    static final String BATCH_OPEN = """
            WITH {new_jobs}, kinds AS (
                SELECT * FROM unnest(?::text[]) WITH ORDINALITY AS kinds(kind, ord)
            ), opened AS (
                INSERT INTO {batch} (id, on_success_id, on_finish_id)
                VALUES (nextval({batch_id_seq}),
                        (SELECT input.id FROM input JOIN kinds USING (ord) WHERE kinds.kind = 'success'),
                        (SELECT input.id FROM input JOIN kinds USING (ord) WHERE kinds.kind = 'finish'))
                RETURNING id
            ), data AS (
                INSERT INTO {job_data} (id, queue, partition_key, partition_bucket, priority, idempotency_key,
                                        payload, headers, max_attempts, fairness_key, batch_id, expires_at, timeout_ms)
                SELECT id, queue, partition_key, partition_bucket, priority, idempotency_key, payload::jsonb,
                       headers::jsonb, max_attempts, fairness_key, (SELECT id FROM opened), expires_at, timeout_ms
                FROM input
            ), held AS (
                INSERT INTO {waiting} (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                       fairness_key, deps_left)
                SELECT id, queue, priority, run_at, max_attempts, partition_key, partition_bucket, fairness_key, 1
                FROM input
            )
            SELECT opened.id AS batch_id, callback.id, callback.kind
            FROM opened
            LEFT JOIN (SELECT input.id, kinds.kind FROM input JOIN kinds USING (ord)) AS callback ON true
            """;


    /**
     * Seals batch {@code ?}: its member count ({@code ?}, the jobs its enqueue inserted), their
     * first and last ids ({@code ?}, {@code ?}) and the members born cancelled ({@code ?}), then
     * finishes it at once when nothing is left to end (empty, or every member born cancelled).
     * Returns the callbacks that moved.
     */
    static final String BATCH_SEAL = """
            WITH sealed AS (
                UPDATE {batch} SET sealed = true, total = ?, first_job_id = ?, last_job_id = ?,
                                   cancelled = cancelled + ?
                WHERE id = ?
                RETURNING id
            )
            SELECT moved.job_id AS id, moved.queue, moved.status
            FROM sealed, {schema}.workrow_finish_batches(ARRAY[sealed.id]) AS moved
            """;

    /**
     * Batch {@code ?}: its counters, its callbacks, and its members still queued or waiting, counted
     * in each home within the batch's id range (its callbacks left out); the members running are
     * the rest, in the same snapshot.
     */
    static final String BATCH_FIND = """
            SELECT batch.id, batch.total, batch.completed, batch.dead, batch.cancelled, batch.on_success_id,
                   batch.on_finish_id, batch.created_at, batch.finished_at, open.pending, open.scheduled, open.waiting
            FROM {batch} AS batch
            CROSS JOIN LATERAL (
                SELECT (SELECT count(*) FROM {ready} AS home JOIN {job_data} AS data ON data.id = home.id
                        WHERE home.id BETWEEN batch.first_job_id AND batch.last_job_id AND data.batch_id = batch.id)
                           AS pending,
                       (SELECT count(*) FROM {scheduled} AS home JOIN {job_data} AS data ON data.id = home.id
                        WHERE home.id BETWEEN batch.first_job_id AND batch.last_job_id AND data.batch_id = batch.id)
                           AS scheduled,
                       (SELECT count(*) FROM {waiting} AS home JOIN {job_data} AS data ON data.id = home.id
                        WHERE home.id BETWEEN batch.first_job_id AND batch.last_job_id AND data.batch_id = batch.id
                          AND home.id IS DISTINCT FROM batch.on_success_id
                          AND home.id IS DISTINCT FROM batch.on_finish_id) AS waiting) AS open
            WHERE batch.id = ?
            """;


    /**
     * The enqueue's jobs that are new ({@code fresh}): keyed ones claim their (queue, key) first,
     * in (queue, key) order, and only those whose key was free are new.
     */
    private static final String FRESH_JOBS = """
            keys AS (
                INSERT INTO {job_key} (queue, idempotency_key, job_id)
                SELECT queue, idempotency_key, id FROM input
                WHERE idempotency_key IS NOT NULL
                ORDER BY queue, idempotency_key
                ON CONFLICT DO NOTHING
                RETURNING job_id
            ), fresh AS MATERIALIZED (
                SELECT * FROM input
                WHERE idempotency_key IS NULL OR id IN (SELECT job_id FROM keys)
            )""";

    /** The enqueue's input: the parallel arrays with an id drawn for each job and its due time. */
    private static final String NEW_JOBS = """
            input AS MATERIALIZED (
                SELECT nextval({job_id_seq}) AS id, request.*,
                       coalesce(request.at::timestamptz,
                                statement_timestamp() + coalesce(request.delay_ms, 0) * interval '1 millisecond') AS run_at,
                       coalesce(request.fairness, request.partition_key, '') AS fairness_key
                FROM unnest(?::text[], ?::text[], ?::int[], ?::int[], ?::text[], ?::text[], ?::text[],
                            ?::text[], ?::bigint[], ?::int[], ?::text[], ?::timestamptz[], ?::bigint[])
                     WITH ORDINALITY AS request(queue, partition_key, partition_bucket, priority, idempotency_key,
                                                payload, headers, at, delay_ms, max_attempts, fairness, expires_at,
                                                timeout_ms, ord)
            )""";

    /** The enqueue's writes of the jobs in {@code source}: their data, and their ready or scheduled row. */
    private static String homesOf(String source) {
        return """
                data AS (
                    INSERT INTO {job_data} (id, queue, partition_key, partition_bucket, priority, idempotency_key,
                                            payload, headers, max_attempts, fairness_key, batch_id, expires_at,
                                            timeout_ms)
                    SELECT id, queue, partition_key, partition_bucket, priority, idempotency_key,
                           payload::jsonb, headers::jsonb, max_attempts, fairness_key, {batch_id}, expires_at,
                           timeout_ms
                    FROM {source}
                ), due AS (
                    INSERT INTO {ready} (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                         fairness_key, waited_on)
                    SELECT id, queue, priority, run_at, max_attempts, partition_key, partition_bucket, fairness_key,
                           {member}
                    FROM {source} WHERE run_at <= statement_timestamp()
                ), later AS (
                    INSERT INTO {scheduled} (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                             fairness_key, waited_on)
                    SELECT id, queue, priority, run_at, max_attempts, partition_key, partition_bucket, fairness_key,
                           {member}
                    FROM {source} WHERE run_at > statement_timestamp()
                )""".replace("{source}", source);
    }

    /**
     * Frees the keys ({@code ?::text[]} queues and keys, with the scope of the enqueue that wants
     * each, 'waiting' or 'active') whose job is no longer within that scope: for 'waiting', it has
     * started (it is not in ready, scheduled or waiting, or it is there again for a retry, a snooze
     * or after a lost lease: an attempt, a snooze or an expiry counted), for 'active', it has ended
     * (in no home and no open position). A batch member's key is never freed. The key's row is deleted under its lock, so of two enqueues that want one key only the
     * first frees it. Returns each key wanted with {@code freed}: true when this statement freed it,
     * false when its job was past the scope but another enqueue changed the key first (its new job
     * is to be looked at again, once that enqueue has committed), NULL when its job is a batch
     * member, whose key stays; other keys still held are not returned.
     */
    static final String JOB_KEYS_RELEASE = """
            WITH wanted AS (
                SELECT * FROM unnest(?::text[], ?::text[], ?::text[]) AS wanted(queue, idempotency_key, scope)
            ), held AS MATERIALIZED (
                SELECT job_key.queue, job_key.idempotency_key, job_key.job_id, wanted.scope
                FROM {job_key} AS job_key
                JOIN wanted ON wanted.queue = job_key.queue AND wanted.idempotency_key = job_key.idempotency_key
            ), still_held AS (
                SELECT ready.id AS job_id FROM {ready} AS ready JOIN held ON held.job_id = ready.id
                WHERE ready.id = ANY (ARRAY(SELECT job_id FROM held)) AND (held.scope = 'active' OR {never_started})
                UNION ALL
                SELECT scheduled.id FROM {scheduled} AS scheduled JOIN held ON held.job_id = scheduled.id
                WHERE scheduled.id = ANY (ARRAY(SELECT job_id FROM held))
                  AND (held.scope = 'active' OR {never_started_scheduled})
                UNION ALL
                SELECT id FROM {waiting} WHERE id = ANY (ARRAY(SELECT job_id FROM held))
                UNION ALL
                -- a batch member keeps its key: its batch counts it, and no job outside may take it
                SELECT data.id FROM {job_data} AS data
                WHERE data.id = ANY (ARRAY(SELECT job_id FROM held)) AND data.batch_id IS NOT NULL
                UNION ALL
                SELECT held.job_id FROM held
                WHERE held.scope = 'active'
                  AND EXISTS (SELECT 1 FROM {claim} AS claim, unnest(claim.ids) WITH ORDINALITY AS open(id, position)
                              WHERE claim.ids @> ARRAY[held.job_id] AND open.id = held.job_id
                                AND get_bit(claim.settled, open.position::int - 1) = 0
                                AND get_bit(claim.dropped, open.position::int - 1) = 0)
            ), freed AS (
                DELETE FROM {job_key} AS job_key
                USING held
                WHERE job_key.queue = held.queue AND job_key.idempotency_key = held.idempotency_key
                  AND job_key.job_id = held.job_id AND held.job_id NOT IN (SELECT job_id FROM still_held)
                RETURNING job_key.queue, job_key.idempotency_key
            )
            SELECT queue, idempotency_key, true AS freed FROM freed
            UNION ALL
            SELECT held.queue, held.idempotency_key, false
            FROM held
            WHERE held.job_id NOT IN (SELECT job_id FROM still_held)
              AND (held.queue, held.idempotency_key) NOT IN (SELECT queue, idempotency_key FROM freed)
            UNION ALL
            SELECT held.queue, held.idempotency_key, NULL
            FROM held
            JOIN {job_data} AS data ON data.id = held.job_id
            WHERE data.id = ANY (ARRAY(SELECT job_id FROM held)) AND data.batch_id IS NOT NULL
            """;

    /**
     * Replaces, for each (queue, key) given ({@code ?::text[]} queues, keys, payloads, headers, due
     * times or delays, deadlines, timeouts and the input's position), the payload, headers, due
     * time, deadline and timeout of the key's job while it has never started (no attempt, snooze or
     * expiry counted: a retry is a started job's) and belongs to no batch: its ready or scheduled row is taken (waiting, under its lock, for a
     * claim that holds it: a job claimed meanwhile has started, and is left alone) and written again
     * where the new due time puts it; a job waiting for others keeps its home with the new due time.
     * The key's row must be locked by an earlier statement of the transaction
     * ({@link #JOB_KEYS_LOCK}): this statement's snapshot is then taken after the replacement
     * before it committed, and sees the rows that one wrote. Returns the jobs replaced, with the
     * input's position.
     */
    static final String JOB_REPLACE_WAITING = """
            WITH wanted AS (
                SELECT *, coalesce(at::timestamptz,
                                   statement_timestamp() + coalesce(delay_ms, 0) * interval '1 millisecond') AS run_at
                FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::timestamptz[],
                            ?::bigint[], ?::int[])
                     AS wanted(queue, idempotency_key, payload, headers, at, delay_ms, expires_at, timeout_ms, ord)
            ), held AS MATERIALIZED (
                SELECT job_key.job_id, wanted.*
                FROM {job_key} AS job_key
                JOIN wanted ON wanted.queue = job_key.queue AND wanted.idempotency_key = job_key.idempotency_key
                -- a batch member's payload is its batch's
                WHERE NOT EXISTS (SELECT 1 FROM {job_data} AS data
                                  WHERE data.id = job_key.job_id AND data.batch_id IS NOT NULL)
            ), from_ready AS (
                DELETE FROM {ready} AS ready
                WHERE ready.id = ANY (ARRAY(SELECT job_id FROM held)) AND {never_started}
                RETURNING ready.*
            ), from_scheduled AS (
                DELETE FROM {scheduled} AS scheduled
                WHERE scheduled.id = ANY (ARRAY(SELECT job_id FROM held)) AND {never_started_scheduled}
                RETURNING scheduled.*
            ), moved AS MATERIALIZED (
                SELECT moved.id, moved.queue, moved.priority, held.run_at, moved.attempts, moved.max_attempts,
                       moved.expiries, moved.partition_key, moved.partition_bucket, moved.fairness_key,
                       moved.last_error, moved.last_error_at, moved.claimed_by, moved.waited_on, moved.snoozes, held.ord
                FROM (SELECT * FROM from_ready UNION ALL SELECT * FROM from_scheduled) AS moved
                JOIN held ON held.job_id = moved.id
            ), from_waiting AS (
                UPDATE {waiting} AS waiting SET run_at = held.run_at
                FROM held WHERE waiting.id = ANY (ARRAY(SELECT job_id FROM held)) AND waiting.id = held.job_id
                RETURNING waiting.id, held.ord
            ), replaced AS MATERIALIZED (
                SELECT id, ord FROM moved UNION ALL SELECT id, ord FROM from_waiting
            ), data AS (
                UPDATE {job_data} AS data SET payload = held.payload::jsonb, headers = held.headers::jsonb,
                                              expires_at = held.expires_at, timeout_ms = held.timeout_ms
                FROM held
                WHERE data.id = ANY (ARRAY(SELECT id FROM replaced)) AND data.id = held.job_id
            ), to_ready AS (
                INSERT INTO {ready} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                     partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on,
                                     snoozes)
                SELECT id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key, partition_bucket,
                       fairness_key, last_error, last_error_at, claimed_by, waited_on, snoozes
                FROM moved WHERE run_at <= statement_timestamp()
            ), to_scheduled AS (
                INSERT INTO {scheduled} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                         partition_bucket, fairness_key, last_error, last_error_at, claimed_by,
                                         waited_on, snoozes)
                SELECT id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key, partition_bucket,
                       fairness_key, last_error, last_error_at, claimed_by, waited_on, snoozes
                FROM moved WHERE run_at > statement_timestamp()
            )
            SELECT id, ord FROM replaced
            """;

    /**
     * Locks the rows of the keys given ({@code ?::text[]} queues and keys), in key order, until the
     * transaction ends: the replacements of one key take turns, each in a snapshot taken after
     * the one before it committed.
     */
    static final String JOB_KEYS_LOCK = """
            SELECT job_key.job_id
            FROM {job_key} AS job_key
            JOIN unnest(?::text[], ?::text[]) AS wanted(queue, idempotency_key)
              ON wanted.queue = job_key.queue AND wanted.idempotency_key = job_key.idempotency_key
            ORDER BY job_key.queue, job_key.idempotency_key
            FOR UPDATE OF job_key
            """;

    /** Ids of existing jobs by (queue, idempotency key), in a snapshot of its own. */
    static final String JOB_FIND_BY_IDEMPOTENCY_KEYS = """
            SELECT job_key.job_id AS id, job_key.queue, job_key.idempotency_key
            FROM {job_key} AS job_key
            JOIN unnest(?::text[], ?::text[]) AS wanted(queue, idempotency_key)
              ON job_key.queue = wanted.queue AND job_key.idempotency_key = wanted.idempotency_key
            """;

    /**
     * Claims up to n due jobs of one queue as one batch: the ready rows are taken (walking the
     * unkeyed and keyed claim indexes in claim order, skipping locked rows) and
     * deleted, and one claim row holds them all under one token and one lease; each job's position
     * is its rank by id. The attempt is counted here. A paused queue, or one whose breaker is not
     * closed (unless this claim takes the probes), claims nothing. Returns each job with its data and
     * saved step.
     */
    static final String JOB_CLAIM = """
            WITH open AS (
                SELECT NOT EXISTS (SELECT 1 FROM {pause} WHERE queue = ?)
                       AND (?::boolean OR NOT EXISTS (SELECT 1 FROM {breaker} WHERE queue = ? AND state <> 'closed'))
                       AND NOT EXISTS (SELECT 1 FROM {hold} WHERE queue = ? AND scope = 'queue' AND until > now())
                       AS open,
                       EXISTS (SELECT 1 FROM {hold} WHERE queue = ? AND scope = 'key' AND until > now()) AS key_holds
            ), unkeyed AS (
                SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                FROM {ready} AS ready
                WHERE ready.queue = ? AND {ready_unkeyed} AND ready.run_at <= now() AND (SELECT open FROM open)
                ORDER BY ready.priority, ready.run_at, ready.id
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), keyed AS (
                SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                FROM {ready} AS ready
                WHERE ready.queue = ? AND {ready_keyed} AND ready.run_at <= now() AND (SELECT open FROM open)
                  AND (NOT (SELECT key_holds FROM open) OR """ + StatementParts.keyNotHeld("ready", "ready.queue") + ")" + """
                ORDER BY ready.priority, ready.run_at, ready.id
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), due AS (
                SELECT row
                FROM (SELECT * FROM unkeyed UNION ALL SELECT * FROM keyed) AS candidate
                ORDER BY priority, run_at, id
                LIMIT ?
            )""" + claimAndReturn("?", "?", false);

    /**
     * The end every claim shares: deletes the ready rows its CTE {@code due} selected (by
     * {@code row}, their ctid), writes one claim row holding them (or, rendered by
     * {@link #renderPerJob}, one claim row per job, for a transactional queue, whose completion
     * holds its claim row locked until the handler's transaction ends) for {@code worker} with a lease of
     * {@code leaseMs} milliseconds (parameter markers, positional or named), for an ordered claim
     * also the keys it now runs in workrow_key_running (whose primary key refuses a key another
     * claim took meanwhile: the whole statement fails and is tried again), and returns each job
     * with its position, data and saved step. The claim's start is the statement's, the clock the
     * fair queues' rates and spacing count by.
     */
    private static String claimAndReturn(String worker, String leaseMs, boolean ordered) {
        return """
                , taken AS (
                    DELETE FROM {ready} AS ready
                    WHERE ready.ctid = ANY (ARRAY(SELECT row FROM due))
                    RETURNING ready.id, ready.queue, ready.attempts + 1 AS attempt, ready.max_attempts,
                              ready.expiries, ready.run_at, ready.partition_key, ready.last_error, ready.last_error_at,
                              ready.waited_on, ready.snoozes
                ), claim AS (
                    INSERT INTO {claim} (token, queue, worker, lease_expires_at, started_at, ids, attempts,
                                         expiries, run_ats, errors, error_ats, settled, dropped, has_keys, has_steps,
                                         waited_on, snoozes)
                    SELECT nextval({lease_token_seq}), min(queue), {worker}, now() + {lease_ms} * interval '1 millisecond',
                           now(), array_agg(id ORDER BY id), array_agg(attempt ORDER BY id),
                           array_agg(expiries ORDER BY id), array_agg(run_at ORDER BY id),
                           CASE WHEN bool_or(last_error IS NOT NULL OR last_error_at IS NOT NULL)
                                THEN array_agg(last_error ORDER BY id) END,
                           CASE WHEN bool_or(last_error IS NOT NULL OR last_error_at IS NOT NULL)
                                THEN array_agg(last_error_at ORDER BY id) END,
                           repeat('0', count(*)::int)::varbit, repeat('0', count(*)::int)::varbit,
                           {has_keys}, EXISTS (SELECT 1 FROM {step} WHERE job_id IN (SELECT id FROM taken)),
                           CASE WHEN bool_or(waited_on)
                                THEN string_agg(CASE WHEN waited_on THEN '1' ELSE '0' END, '' ORDER BY id)::varbit END,
                           CASE WHEN bool_or(snoozes IS NOT NULL) THEN array_agg(coalesce(snoozes, 0) ORDER BY id) END
                    FROM taken
                    GROUP BY {claim_group}
                    HAVING count(*) > 0
                    RETURNING token, ids[1] AS first_id
                ){keys}
                SELECT claim.token, taken.position, taken.id, taken.queue,
                       taken.attempt, taken.max_attempts, taken.expiries, taken.run_at, taken.last_error,
                       taken.last_error_at, data.partition_key, data.idempotency_key, data.payload::text AS payload,
                       data.headers::text AS headers, step.step, data.batch_id,
                       coalesce(taken.waited_on, false) AS waited_on, data.timeout_ms,
                       floor(extract(epoch FROM data.expires_at - statement_timestamp()) * 1000)::bigint
                           AS expires_in_ms,
                       coalesce(taken.snoozes, 0) AS snoozes
                FROM (SELECT taken.*, {position} AS position FROM taken) AS taken
                JOIN claim ON {claim_match}
                CROSS JOIN LATERAL (SELECT job.partition_key, job.idempotency_key, job.payload, job.headers,
                                           job.batch_id, job.timeout_ms, job.expires_at
                                    FROM {job_data} AS job WHERE job.id = taken.id OFFSET 0) AS data
                LEFT JOIN {step} AS step ON step.job_id = taken.id
                ORDER BY taken.position
                """.replace("{worker}", worker).replace("{lease_ms}", leaseMs)
                .replace("{has_keys}", ordered ? "bool_or(partition_key IS NOT NULL)" : "false")
                .replace("{keys}", ordered ? """
                        , keys AS (
                            INSERT INTO {key_running} (queue, ordered_key, claim_token, job_id)
                            SELECT taken.queue, taken.partition_key, claim.token, taken.id
                            FROM taken JOIN claim ON {claim_match}
                            WHERE taken.partition_key IS NOT NULL
                        )""" : "");
    }

    /**
     * Claims up to {@code :limit} jobs of an ordered queue (heads found without walking a backlog): per
     * partition key in the buckets this worker owns ({@code :buckets}), only the key's oldest ready
     * job, and only while no job of the key runs (a row in workrow_key_running, on any node) and,
     * with {@code :skip_failed} false, no older job of the key waits in workrow_scheduled. Jobs
     * without a key are not ordered and not bound to buckets. Candidates carry their ready row's
     * ctid to the lock, which skips rows another claim holds and drops rows taken since.
     *
     * <p>What this statement's snapshot cannot see (a key another claim took after it began) is
     * caught by workrow_key_running's primary key: the later claim fails and is tried again.
     */
    static final String JOB_CLAIM_ORDERED = """
            WITH RECURSIVE walk AS MATERIALIZED (
                SELECT w.*, min(w.id) OVER (PARTITION BY w.partition_key) AS key_min
                FROM ((SELECT ready.ctid AS row, ready.id, ready.partition_key, ready.partition_bucket,
                              ready.priority, ready.run_at
                       FROM {ready} AS ready
                       WHERE ready.queue = :queue AND {ready_unkeyed} AND ready.run_at <= now()
                       ORDER BY ready.priority, ready.run_at, ready.id
                       LIMIT :walk)
                      UNION ALL
                      (SELECT ready.ctid AS row, ready.id, ready.partition_key, ready.partition_bucket,
                              ready.priority, ready.run_at
                       FROM {ready} AS ready
                       WHERE ready.queue = :queue AND {ready_keyed} AND ready.run_at <= now()
                       ORDER BY ready.priority, ready.run_at, ready.id
                       LIMIT :walk)
                      ORDER BY priority, run_at, id
                      LIMIT :walk) AS w
            ), fast AS MATERIALIZED (
                SELECT walk.row, walk.id, walk.priority, walk.run_at
                FROM walk
                WHERE walk.partition_key IS NULL
                   OR (walk.partition_bucket = ANY (:buckets::int[])
                       AND walk.id = walk.key_min
                       AND NOT EXISTS (SELECT 1 FROM {ready} AS older
                                       WHERE older.queue = :queue AND older.partition_key = walk.partition_key
                                         AND older.id < walk.id)
                       AND {key_free_walk})
                ORDER BY walk.priority, walk.run_at, walk.id
                LIMIT :limit
            ), heads AS (
                (SELECT ready.partition_key, ready.ctid AS row, ready.id, ready.partition_bucket, ready.priority,
                        ready.run_at
                 FROM {ready} AS ready
                 WHERE ready.queue = :queue AND ready.partition_key IS NOT NULL
                 ORDER BY ready.partition_key, ready.id
                 LIMIT 1)
                UNION ALL
                SELECT next.*
                FROM heads
                CROSS JOIN LATERAL (
                    SELECT ready.partition_key, ready.ctid AS row, ready.id, ready.partition_bucket, ready.priority,
                           ready.run_at
                    FROM {ready} AS ready
                    WHERE ready.queue = :queue AND ready.partition_key IS NOT NULL
                      AND ready.partition_key > heads.partition_key
                    ORDER BY ready.partition_key, ready.id
                    LIMIT 1) AS next
            ), candidates AS (
                SELECT fast.row, fast.id, fast.priority, fast.run_at FROM fast
                UNION
                (SELECT heads.row, heads.id, heads.priority, heads.run_at
                 FROM heads
                 WHERE (SELECT count(*) FROM fast) < :limit
                   AND heads.partition_bucket = ANY (:buckets::int[]) AND heads.run_at <= now()
                   AND {key_free_heads}
                 LIMIT :limit)
                UNION
                (SELECT keyless.*
                 FROM ((SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                        FROM {ready} AS ready
                        WHERE ready.queue = :queue AND {ready_unkeyed} AND ready.run_at <= now()
                        ORDER BY ready.priority, ready.run_at, ready.id
                        LIMIT :limit)
                       UNION ALL
                       (SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                        FROM {ready} AS ready
                        WHERE ready.queue = :queue AND ready.partition_key IS NULL AND ready.fairness_key <> ''
                          AND ready.run_at <= now()
                        ORDER BY ready.priority, ready.run_at, ready.id
                        LIMIT :limit)) AS keyless
                 WHERE (SELECT count(*) FROM fast) < :limit
                 ORDER BY keyless.priority, keyless.run_at, keyless.id
                 LIMIT :limit)
            ), due AS (
                SELECT ready.ctid AS row
                FROM (SELECT * FROM candidates ORDER BY priority, run_at, id LIMIT :limit * 4) AS candidate
                JOIN {ready} AS ready ON ready.ctid = candidate.row
                WHERE ready.run_at <= now()""" + StatementParts.QUEUE_OPEN + """
                ORDER BY candidate.priority, candidate.run_at, candidate.id
                LIMIT :limit
                FOR UPDATE OF ready SKIP LOCKED
            )""" + claimAndReturn(":worker", ":lease_ms", true);

    /**
     * Claims up to {@code :limit} jobs of a queue with a per-key cap ({@code key-concurrency}): per
     * partition key with ready jobs (found by a loose scan of the key index, one probe per key, so a
     * hot key at its cap hides no other key), its oldest jobs up to the cap less the key's open
     * positions on every node, counted from the claim rows; jobs without a key as a plain claim
     * takes them. Runs in the capped transaction, after the queue's cap row was locked, so its
     * snapshot sees every claim before it and no other claim of the queue runs meanwhile.
     */
    static final String JOB_CLAIM_KEY_CAPPED = """
            WITH RECURSIVE running AS MATERIALIZED (
                SELECT data.partition_key, count(*)::int AS n
                FROM {claim} AS claim
                CROSS JOIN LATERAL unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                JOIN {job_data} AS data ON data.id = held.id
                WHERE claim.queue = :queue
                  AND get_bit(claim.settled, held.position::int - 1) = 0
                  AND get_bit(claim.dropped, held.position::int - 1) = 0
                  AND data.partition_key IS NOT NULL
                GROUP BY data.partition_key
            ), keys AS (
                (SELECT ready.partition_key
                 FROM {ready} AS ready
                 WHERE ready.queue = :queue AND ready.partition_key IS NOT NULL
                 ORDER BY ready.partition_key
                 LIMIT 1)
                UNION ALL
                SELECT next.partition_key
                FROM keys
                CROSS JOIN LATERAL (
                    SELECT ready.partition_key
                    FROM {ready} AS ready
                    WHERE ready.queue = :queue AND ready.partition_key IS NOT NULL
                      AND ready.partition_key > keys.partition_key
                    ORDER BY ready.partition_key
                    LIMIT 1) AS next
            ), candidates AS (
                SELECT pick.*
                FROM keys
                LEFT JOIN running ON running.partition_key = keys.partition_key
                CROSS JOIN LATERAL (
                    SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                    FROM {ready} AS ready
                    WHERE ready.queue = :queue AND ready.partition_key = keys.partition_key
                      AND ready.run_at <= now() AND""" + StatementParts.keyNotHeld("ready", ":queue") + """

                    ORDER BY ready.id
                    LIMIT greatest(:key_cap - coalesce(running.n, 0), 0)) AS pick
                UNION ALL
                (SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                 FROM {ready} AS ready
                 WHERE ready.queue = :queue AND {ready_unkeyed} AND ready.run_at <= now()
                 ORDER BY ready.priority, ready.run_at, ready.id
                 LIMIT :limit)
                UNION ALL
                (SELECT ready.ctid AS row, ready.id, ready.priority, ready.run_at
                 FROM {ready} AS ready
                 WHERE ready.queue = :queue AND ready.partition_key IS NULL AND ready.fairness_key <> ''
                   AND ready.run_at <= now()
                 ORDER BY ready.priority, ready.run_at, ready.id
                 LIMIT :limit)
            ), due AS (
                SELECT ready.ctid AS row
                FROM (SELECT * FROM candidates ORDER BY priority, run_at, id LIMIT :limit * 2) AS candidate
                JOIN {ready} AS ready ON ready.ctid = candidate.row
                WHERE ready.run_at <= now()""" + StatementParts.QUEUE_OPEN + """
                ORDER BY candidate.priority, candidate.run_at, candidate.id
                LIMIT :limit
                FOR UPDATE OF ready SKIP LOCKED
            )""" + claimAndReturn(":worker", ":lease_ms", false);

    /**
     * Claims up to {@code :limit} jobs of a weighted fair queue from the ready rows, by the weighted
     * policy of {@link StatementParts}.
     */
    static final String JOB_CLAIM_WEIGHTED = StatementParts.FAIR_GROUPS + StatementParts.WEIGHTED_CHOICE
            + StatementParts.FAIR_LOCK + StatementParts.WEIGHTED_GRANT + claimAndReturn(":worker", ":lease_ms", false);

    /** A burst fair queue's claim from the ready rows ({@link JobSql#JOB_CLAIM_BURST}'s policy). */
    static final String JOB_CLAIM_BURST = StatementParts.FAIR_GROUPS + StatementParts.BURST_CHOICE
            + StatementParts.FAIR_LOCK + StatementParts.BURST_GRANT + claimAndReturn(":worker", ":lease_ms", false);

    /** A spaced fair queue's claim from the ready rows ({@link JobSql#JOB_CLAIM_SPACED}'s policy). */
    static final String JOB_CLAIM_SPACED = StatementParts.FAIR_GROUPS + StatementParts.SPACED_CHOICE
            + StatementParts.FAIR_LOCK + StatementParts.SPACED_GRANT + claimAndReturn(":worker", ":lease_ms", false);

    /**
     * A key no job runs (on any node), that no hold covers and, unless failed keys are skipped, no
     * older job of which waits to retry. Checked where the candidates are chosen: the claim takes
     * only as many candidates as it may claim.
     */
    private static String keyFree(String candidate) {
        return ("""
                NOT EXISTS (SELECT 1 FROM {key_running} AS running
                                       WHERE running.queue = :queue AND running.ordered_key = {c}.partition_key)
                           AND""" + StatementParts.keyNotHeld(candidate, ":queue") + """

                           AND (:skip_failed OR NOT EXISTS (SELECT 1 FROM {scheduled} AS held
                                                            WHERE held.queue = :queue
                                                              AND held.partition_key = {c}.partition_key
                                                              AND held.id < {c}.id))""").replace("{c}", candidate);
    }

    /**
     * Ends many positions in one statement: completions, failures (retried or dead), discards,
     * releases and interruptions at shutdown, and a handler let go past its timeout ({@code expired},
     * recovered by the queue's rule as the sweeper would: the rule the queue declared in
     * workrow_queue_rule, else the ending node's backoff and {@code max_expiries} from the input;
     * with {@code max_expiries} the attempt is given back and the job retires when its expiries
     * reach it; without, the attempt counts). The fence is the claim row, locked {@code SKIP LOCKED} by token so one
     * row held elsewhere never stalls the other claims' ends; an end is accepted when its claim row
     * was locked here and its position is open. Accepted ends set their {@code settled} bits, or
     * delete the claim row when no position stays open (disjoint rows, so one statement does both),
     * append their outcome rows, move retried and released jobs to ready or scheduled (reading the
     * job's data only for them; a job released or interrupted at shutdown keeps its due time, so it
     * is first in line again) and dead ones to workrow_dead, and drop their ordered keys and, for
     * completed jobs, saved steps (only for claims flagged to have any; a dead job keeps its step,
     * so an operator's retry resumes from it, as today). A snooze ({@code snoozed}) moves the job
     * back like a retry, its attempt given back and its {@code snoozes} counted; a job past its
     * deadline ({@code past_deadline}) is cancelled, its attempt given back and the reason its
     * error.
     *
     * <p>Every input comes back with its verdict: {@code accepted} (with the job's new status), or
     * else whether the claim row was there but locked elsewhere ({@code busy}: try again), or this
     * claim already logged an outcome of the job's own ({@code ended}: an earlier send of this end
     * committed and its reply was lost), or neither: the lease or the job was lost.
     */
    static final String JOB_END_MANY = """
            WITH input AS (
                SELECT *
                FROM unnest(?::bigint[], ?::int[], ?::bigint[], ?::int[], ?::int[], ?::int[], ?::text[], ?::text[],
                            ?::bigint[], ?::int[], ?::timestamptz[], ?::text[], ?::timestamptz[], ?::text[], ?::int[])
                     AS input(token, position, id, attempt, max_attempts, expiries, kind, error, retry_delay_ms,
                              max_expiries, due_at, earlier_error, earlier_error_at, result, snoozes)
            {locked_claims}
            ), open AS (
                SELECT input.*, locked.queue, locked.worker, locked.started_at, locked.has_keys, locked.has_steps,
                       CASE WHEN locked.waited_on IS NOT NULL AND get_bit(locked.waited_on, input.position - 1) = 1
                            THEN true END AS waited_on,
                       coalesce(rule.max_lease_expiries, input.max_expiries) AS expiry_limit,
                       CASE WHEN rule.queue IS NULL THEN input.retry_delay_ms
                            ELSE\s""" + StatementParts.backoffMillis("rule.backoff_max_ms", "rule.backoff_initial_ms",
                    "rule.backoff_multiplier", "CASE WHEN rule.max_lease_expiries > 0 THEN input.expiries"
                            + " ELSE greatest(input.attempt - 1, 0) END", "rule.backoff_jitter") + """
                       END AS delay_ms,
                       input.kind = 'expired' AND coalesce(rule.max_lease_expiries, input.max_expiries) > 0 AS apart
                FROM input
                JOIN locked ON locked.token = input.token
                LEFT JOIN {queue_rule} AS rule ON input.kind = 'expired' AND rule.queue = locked.queue
                WHERE get_bit(locked.settled, input.position - 1) = 0 AND get_bit(locked.dropped, input.position - 1) = 0
                  {workflow_gate}
            ), accepted AS MATERIALIZED (
                SELECT open.*,
                       CASE WHEN kind = 'completed' THEN 'completed'
                            WHEN kind = 'released' THEN 'pending'
                            WHEN kind = 'past_deadline' THEN 'cancelled'
                            WHEN kind = 'snoozed' THEN CASE WHEN delay_ms > 0 THEN 'scheduled' ELSE 'pending' END
                            WHEN apart AND expiries + 1 >= expiry_limit THEN 'dead'
                            WHEN NOT apart AND (kind = 'discarded' OR attempt >= max_attempts) THEN 'dead'
                            WHEN delay_ms > 0 THEN 'scheduled'
                            ELSE 'pending' END AS status,
                       CASE WHEN kind IN ('released', 'past_deadline', 'snoozed') OR apart THEN greatest(attempt - 1, 0)
                            ELSE attempt END AS next_attempts,
                       CASE WHEN kind = 'snoozed' THEN snoozes + 1 ELSE nullif(snoozes, 0) END AS next_snoozes,
                       CASE WHEN kind = 'expired' THEN expiries + 1 ELSE expiries END AS next_expiries,
                       CASE WHEN kind = 'interrupted' THEN 'interrupted by shutdown of ' || worker
                            WHEN apart AND expiries + 1 >= expiry_limit
                            THEN 'lease expired ' || (expiries + 1) || ' times; last held by ' || worker
                            WHEN kind = 'expired' THEN 'lease expired while held by ' || worker
                            WHEN kind IN ('released', 'snoozed') THEN earlier_error
                            ELSE error END AS message,
                       CASE WHEN kind IN ('released', 'snoozed') THEN earlier_error_at ELSE clock_timestamp() END
                           AS message_at
                FROM open
            {settle}
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, claim_token, queue, status, worker, run_at,
                                       started_at, finished_at, error, error_at, step, result)
                SELECT id, CASE WHEN kind = 'past_deadline' THEN next_attempts ELSE attempt END, next_expiries, token,
                       queue,
                       CASE WHEN kind = 'expired' THEN 'expired' WHEN kind = 'snoozed' THEN 'snoozed'
                            WHEN status IN ('completed', 'dead', 'cancelled') THEN status
                            WHEN kind IN ('released', 'interrupted') THEN 'released' ELSE 'failed' END,
                       worker, due_at, started_at, clock_timestamp(),
                       CASE WHEN status = 'completed' THEN earlier_error WHEN kind = 'released' THEN NULL
                            WHEN kind = 'snoozed' THEN error ELSE message END,
                       CASE WHEN status = 'completed' THEN earlier_error_at WHEN status = 'cancelled' THEN clock_timestamp()
                       END,
                       CASE WHEN has_steps AND status IN ('completed', 'cancelled') THEN {saved_step} END,
                       CASE WHEN status = 'completed' THEN result::jsonb END
                FROM accepted
            ), again AS MATERIALIZED (
                SELECT accepted.id, accepted.queue, accepted.status, accepted.max_attempts, accepted.next_attempts,
                       accepted.next_snoozes,
                       accepted.next_expiries, accepted.message, accepted.message_at, accepted.waited_on,
                       CASE WHEN accepted.kind IN ('released', 'interrupted') THEN accepted.due_at
                            ELSE clock_timestamp() + greatest(accepted.delay_ms, 0) * interval '1 millisecond'
                       END AS run_at,
                       data.priority, data.partition_key, data.partition_bucket, data.fairness_key
                FROM accepted
                CROSS JOIN LATERAL (SELECT job.priority, job.partition_key, job.partition_bucket, job.fairness_key
                                    FROM {job_data} AS job
                                    WHERE job.id = accepted.id AND accepted.status IN ('pending', 'scheduled')
                                    OFFSET 0) AS data
            ), to_ready AS (
                INSERT INTO {ready} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                     partition_bucket, fairness_key, last_error, last_error_at, waited_on, snoozes)
                SELECT id, queue, priority, run_at, next_attempts, max_attempts, next_expiries, partition_key,
                       partition_bucket, fairness_key, message, CASE WHEN message IS NOT NULL THEN message_at END,
                       waited_on, next_snoozes
                FROM again WHERE status = 'pending'
            ), to_scheduled AS (
                INSERT INTO {scheduled} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                         partition_bucket, fairness_key, last_error, last_error_at, waited_on, snoozes)
                SELECT id, queue, priority, run_at, next_attempts, max_attempts, next_expiries, partition_key,
                       partition_bucket, fairness_key, message, CASE WHEN message IS NOT NULL THEN message_at END,
                       waited_on, next_snoozes
                FROM again WHERE status = 'scheduled'
            ), to_dead AS (
                INSERT INTO {dead} (id, queue, attempts, max_attempts, expiries, last_error, last_error_at,
                                    claimed_by, started_at, finished_at)
                SELECT id, queue, next_attempts, max_attempts, next_expiries, message, clock_timestamp(), worker,
                       started_at, clock_timestamp()
                FROM accepted WHERE status = 'dead'
            {drop_keys}
            ), steps AS (
                DELETE FROM {step} AS step
                USING accepted
                WHERE accepted.has_steps AND accepted.status IN ('completed', 'cancelled') AND step.job_id = accepted.id
            )
            SELECT input.token, input.position, accepted.status,
                   {verdicts}
            """;

    /**
     * {@link #JOB_END_MANY} for completions only, the common end: the same fence and bits, without
     * the moves a failure or a release needs, whose empty inserts would still cost every statement
     * their plans and the ready table's trigger. Keys and steps are dropped as there. Returns only
     * the ends it did not accept, with their verdicts; every other input was completed.
     */
    static final String JOB_COMPLETE_MANY = """
            WITH input AS (
                SELECT *, 'completed'::text AS kind
                FROM unnest(?::bigint[], ?::int[], ?::bigint[], ?::int[], ?::int[], ?::timestamptz[], ?::text[],
                            ?::timestamptz[], ?::text[])
                     AS input(token, position, id, attempt, expiries, due_at, earlier_error, earlier_error_at, result)
            {locked_claims}
            ), accepted AS MATERIALIZED (
                SELECT input.*, locked.queue, locked.worker, locked.started_at, locked.has_keys, locked.has_steps
                FROM input
                JOIN locked ON locked.token = input.token
                WHERE get_bit(locked.settled, input.position - 1) = 0 AND get_bit(locked.dropped, input.position - 1) = 0
                  {workflow_gate}
            {settle}
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, claim_token, queue, status, worker, run_at,
                                       started_at, finished_at, error, error_at, step, result)
                SELECT id, attempt, expiries, token, queue, 'completed', worker, due_at, started_at, clock_timestamp(),
                       earlier_error, earlier_error_at, CASE WHEN has_steps THEN {saved_step} END, result::jsonb
                FROM accepted
            {drop_keys}
            ), steps AS (
                DELETE FROM {step} AS step
                USING accepted
                WHERE accepted.has_steps AND step.job_id = accepted.id
            )
            SELECT input.token, input.position,
                   input.token NOT IN (SELECT token FROM locked)
                       AND EXISTS (SELECT 1 FROM {claim} AS claim WHERE claim.token = input.token) AS busy,
                   CASE WHEN {workflow_verdict} THEN false ELSE {ended} END AS ended,
                   {workflow_verdict} AS workflow
            FROM input
            WHERE (input.token, input.position) NOT IN (SELECT token, position FROM accepted)
            """;

    /**
     * {@link #JOB_COMPLETE_MANY} run inside a transactional handler's own transaction: it waits for
     * the claim row's lock rather than skipping it (a renewal holds it for a moment), since skipping
     * would roll back the handler's work for nothing. Its claim should hold that job alone, or the
     * handler's open transaction keeps the batch-mates' ends waiting.
     */
    static final String JOB_COMPLETE_IN_TRANSACTION = JOB_COMPLETE_MANY.replace("{locked_claims}",
            "{locked_claims_waiting}").replace("{workflow_gate}", "");

    /**
     * {@link #JOB_END_MANY} without the gate: the end of positions whose jobs others wait on, each
     * followed in its transaction by {@link #JOB_SETTLE} for the jobs it made terminal.
     */
    static final String JOB_END_MANY_SETTLING = JOB_END_MANY.replace("{workflow_gate}", "");

    /** {@link #JOB_COMPLETE_MANY} without the gate: the completions of {@link #JOB_END_MANY_SETTLING}. */
    static final String JOB_COMPLETE_MANY_SETTLING = JOB_COMPLETE_MANY.replace("{workflow_gate}", "");

    /**
     * Settles the edges of jobs just made terminal ({@code workrow_settle}, V15): releases or
     * cancels their waiters, and on down. Runs in the transaction that made them terminal, after
     * the statement that locked their homes. Returns the waiters moved, with their new status.
     */
    static final String JOB_SETTLE = """
            SELECT job_id AS id, queue, status FROM {schema}.workrow_settle(?::bigint[], ?::text[])
            """;

    /**
     * {@link #JOB_SETTLE} of ends whose batches the claim read: the third array holds each job's
     * batch ({@code NULL}: none), so the settle need not look them up.
     */
    static final String JOB_SETTLE_MEMBERS = """
            SELECT job_id AS id, queue, status FROM {schema}.workrow_settle(?::bigint[], ?::text[], true, ?::bigint[])
            """;

    /**
     * Renews the leases of every claim one runtime holds (one row per batch, not per job), each to
     * its own lease from the database's current time, and records the runtime as the holder of
     * every token it renews, locked rows' included (the vouch {@link #JOB_SWEEP_EXPIRED_LEASES}
     * respects). Rows locked elsewhere are skipped. Returns each renewed claim
     * with its {@code dropped} bits, so a cancelled job's handler is interrupted.
     */
    static final String JOB_RENEW_LEASES = StatementParts.LEASE_HOLDER_VOUCH + """
            , held AS (
                SELECT claim.token, renewal.lease_ms
                FROM unnest(?::bigint[], ?::bigint[]) AS renewal(token, lease_ms)
                JOIN {claim} AS claim ON claim.token = renewal.token
                WHERE claim.worker = ?
                FOR UPDATE OF claim SKIP LOCKED
            )
            UPDATE {claim} AS claim
            SET lease_expires_at = clock_timestamp() + held.lease_ms * interval '1 millisecond'
            FROM held
            WHERE claim.token = held.token
            RETURNING claim.token, claim.dropped::text AS dropped
            """;

    /**
     * Recovers the jobs of claims whose lease expired and whose holder does not vouch for them:
     * the claim row is deleted, and each open position gets an {@code expired} outcome row and goes
     * back, by its queue's rule (the declared rule, else this node's arrays, else
     * the fallback values), to scheduled after the backoff (ready when it is zero) or to dead; a
     * queue with {@code max_lease_expiries} gives the attempt back and retires the job when its
     * expiries reach the limit. The claim's ordered keys go with it.
     */
    static final String JOB_SWEEP_EXPIRED_LEASES = """
            WITH expired AS (
                SELECT claim.token
                FROM {claim} AS claim
                WHERE claim.lease_expires_at < statement_timestamp()
                  AND NOT EXISTS (SELECT 1 FROM {lease_holder} AS holder
                                  WHERE holder.worker = claim.worker
                                    AND holder.renewed_until > statement_timestamp()
                                    AND claim.token = ANY (holder.tokens))
                ORDER BY claim.lease_expires_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), gone AS MATERIALIZED (
                DELETE FROM {claim} AS claim
                WHERE claim.token = ANY (ARRAY(SELECT token FROM expired))
                RETURNING claim.*
            ), open AS MATERIALIZED (
                SELECT gone.token, gone.queue, gone.worker, gone.started_at, held.id, held.attempt, held.expiries + 1
                       AS expiries, held.run_at AS due_at, nullif(gone.snoozes[held.position], 0) AS snoozes,
                       CASE WHEN gone.waited_on IS NOT NULL AND get_bit(gone.waited_on, held.position::int - 1) = 1
                            THEN true END AS waited_on
                FROM gone
                CROSS JOIN LATERAL unnest(gone.ids, gone.attempts, gone.expiries, gone.run_ats)
                     WITH ORDINALITY AS held(id, attempt, expiries, run_at, position)
                WHERE get_bit(gone.settled, held.position::int - 1) = 0 AND get_bit(gone.dropped, held.position::int - 1) = 0
            ), rule AS (""" + StatementParts.recoveryRules("open") + """
            ), counted AS (
                SELECT open.*, coalesce(rule.max_lease_expiries, ?::int) AS max_expiries, data.max_attempts,
                       data.priority, data.partition_key, data.partition_bucket, data.fairness_key,
                       rule.initial_ms, rule.multiplier, rule.max_ms, rule.jitter
                FROM open
                CROSS JOIN LATERAL (SELECT job.max_attempts, job.priority, job.partition_key, job.partition_bucket,
                                           job.fairness_key
                                    FROM {job_data} AS job WHERE job.id = open.id OFFSET 0) AS data
                LEFT JOIN rule ON rule.queue = open.queue
            ), recovered AS MATERIALIZED (
                SELECT counted.*,
                       CASE WHEN counted.max_expiries > 0 THEN greatest(counted.attempt - 1, 0)
                            ELSE counted.attempt END AS attempts,
                       CASE WHEN counted.max_expiries > 0 THEN counted.expiries >= counted.max_expiries
                            ELSE counted.attempt >= counted.max_attempts END AS dead,
                       CASE WHEN counted.max_expiries > 0 AND counted.expiries >= counted.max_expiries
                            THEN 'lease expired ' || counted.expiries || ' times; last held by ' || counted.worker
                            ELSE 'lease expired while held by ' || counted.worker END AS error,
                       """ + StatementParts.backoffMillis("coalesce(counted.max_ms, ?::bigint)",
                    "coalesce(counted.initial_ms, ?::bigint)", "coalesce(counted.multiplier, ?::float8)",
                    "CASE WHEN counted.max_expiries > 0 THEN counted.expiries - 1"
                            + " ELSE greatest(counted.attempt - 1, 0) END",
                    "coalesce(counted.jitter, ?::float8)") + """
                           AS delay_ms
                FROM counted
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, claim_token, queue, status, worker, run_at,
                                       started_at, finished_at, error)
                SELECT id, attempt, expiries, token, queue, 'expired', worker, due_at, started_at, clock_timestamp(),
                       error
                FROM recovered
            ), to_ready AS (
                INSERT INTO {ready} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                     partition_bucket, fairness_key, last_error, last_error_at, waited_on, snoozes)
                SELECT id, queue, priority, clock_timestamp(), attempts, max_attempts, expiries, partition_key,
                       partition_bucket, fairness_key, error, clock_timestamp(), waited_on, snoozes
                FROM recovered WHERE NOT dead AND delay_ms <= 0
            ), to_scheduled AS (
                INSERT INTO {scheduled} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                         partition_bucket, fairness_key, last_error, last_error_at, waited_on, snoozes)
                SELECT id, queue, priority, clock_timestamp() + delay_ms * interval '1 millisecond', attempts,
                       max_attempts, expiries, partition_key, partition_bucket, fairness_key, error, clock_timestamp(),
                       waited_on, snoozes
                FROM recovered WHERE NOT dead AND delay_ms > 0
            ), to_dead AS (
                INSERT INTO {dead} (id, queue, attempts, max_attempts, expiries, last_error, last_error_at,
                                    claimed_by, started_at, finished_at)
                SELECT id, queue, attempts, max_attempts, expiries, error, clock_timestamp(), worker, started_at,
                       clock_timestamp()
                FROM recovered WHERE dead
            ), keys AS (
                DELETE FROM {key_running} AS key
                USING gone
                WHERE gone.has_keys AND key.claim_token = gone.token
            )
            SELECT id, queue, CASE WHEN dead THEN 'dead' WHEN delay_ms > 0 THEN 'scheduled' ELSE 'pending' END
                       AS status, worker AS previous_owner, attempts, max_attempts, expiries AS lease_expiries
            FROM recovered
            """;

    /**
     * Cancels a queued or running job of {@code queue}: a ready or scheduled row is deleted; a
     * running job's position gets its {@code dropped} bit and its handler a {@code cancel:<id>}
     * notification. The claim row stays even when that was its last open position, so that its
     * holder's next renewal reports the position dropped (a cancel, not a lost lease); the holder
     * then renews it no more and the sweeper deletes it, with nothing left to recover, once it expires. Either way a
     * {@code cancelled} outcome row is written from what the move returned. Returns nothing when the
     * job was in none of these homes at the moment of the statement: finished, dead, or moving
     * between homes (the caller looks again).
     */
    static final String JOB_CANCEL = """
            WITH from_ready AS (
                DELETE FROM {ready} WHERE id = ? AND queue = ?
                RETURNING id, queue, attempts, expiries, claimed_by AS worker, NULL::bigint AS token, run_at,
                          NULL::timestamptz AS started_at, last_error, last_error_at
            ), from_scheduled AS (
                DELETE FROM {scheduled} WHERE id = ? AND queue = ?
                RETURNING id, queue, attempts, expiries, claimed_by AS worker, NULL::bigint AS token, run_at,
                          NULL::timestamptz AS started_at, last_error, last_error_at
            ), from_waiting AS MATERIALIZED (
                DELETE FROM {waiting} WHERE id = ? AND queue = ?
                RETURNING id, queue, attempts, expiries, claimed_by AS worker, NULL::bigint AS token, run_at,
                          NULL::timestamptz AS started_at, last_error, last_error_at
            ), unwanted AS (
                DELETE FROM {dependency} AS edge WHERE edge.waiter_id IN (SELECT id FROM from_waiting)
            ), holding AS MATERIALIZED (
                SELECT claim.token, array_position(claim.ids, ?::bigint) AS position, claim.settled, claim.dropped,
                       claim.attempts, claim.expiries, claim.run_ats, claim.errors, claim.error_ats, claim.queue,
                       claim.worker, claim.started_at
                FROM {claim} AS claim
                WHERE claim.queue = ? AND claim.ids @> ARRAY[?::bigint]
                FOR UPDATE
            ), target AS MATERIALIZED (
                SELECT holding.*, set_bit(holding.dropped, holding.position - 1, 1) AS now_dropped
                FROM holding
                WHERE get_bit(holding.settled, holding.position - 1) = 0 AND get_bit(holding.dropped, holding.position - 1) = 0
            ), marked AS (
                UPDATE {claim} AS claim
                SET dropped = target.now_dropped
                FROM target
                WHERE claim.token = ANY (ARRAY(SELECT token FROM target)) AND claim.token = target.token
                RETURNING claim.token
            ), from_claim AS (
                SELECT ?::bigint AS id, target.queue, target.attempts[target.position] AS attempts,
                       target.expiries[target.position] AS expiries, target.worker, target.token,
                       target.run_ats[target.position] AS run_at, target.started_at,
                       target.errors[target.position] AS last_error, target.error_ats[target.position] AS last_error_at
                FROM target
            ), cancelled AS (
                SELECT * FROM from_ready UNION ALL SELECT * FROM from_scheduled UNION ALL SELECT * FROM from_waiting
                UNION ALL SELECT * FROM from_claim
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, claim_token, queue, status, worker, run_at,
                                       started_at, finished_at, error, error_at, step)
                SELECT id, attempts, expiries, token, queue, 'cancelled', worker, run_at, started_at, clock_timestamp(),
                       last_error, last_error_at, {saved_step}
                FROM cancelled
            ), keys AS (
                DELETE FROM {key_running} AS key
                USING cancelled
                WHERE cancelled.token IS NOT NULL AND key.claim_token = cancelled.token AND key.job_id = cancelled.id
            ), steps AS (
                DELETE FROM {step} AS step WHERE step.job_id IN (SELECT id FROM cancelled)
            )
            SELECT id, CASE WHEN token IS NOT NULL THEN pg_notify({channel}, 'cancel:' || id) END
            FROM cancelled
            """;

    /**
     * Cancels jobs nobody started by their deadline: takes up to {@code ?} deadlines that have
     * passed from the front of {@code workrow_deadline} (skipping rows another node's sweep holds)
     * and cancels those of their jobs that still wait in ready, scheduled or waiting with that
     * deadline in force (a replacement may have moved it later), with the reason
     * {@code expired: ...}, as a worker cancels one that reaches it too late. Every deadline taken
     * is then deleted, except that of a job that may still come back to wait: one in an open
     * position of a claim (its worker never starts it late, but a retry, a release or a lost lease
     * puts it back) or one whose home row another transaction holds locked (a claim taking it, a
     * settle, an operator's session), which is looked at again {@code ?} milliseconds later, out of
     * the way of the next deadlines. Returns the jobs cancelled, each once, and how many deadlines
     * were taken; the caller settles the dependents of the jobs cancelled, in the same transaction.
     */
    static final String JOB_CANCEL_PAST_DEADLINE = """
            WITH passed AS MATERIALIZED (
                SELECT ctid AS row, job_id
                FROM {deadline}
                WHERE expires_at <= statement_timestamp()
                ORDER BY expires_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), expired AS MATERIALIZED (
                SELECT data.id
                FROM {job_data} AS data
                WHERE data.id = ANY (ARRAY(SELECT job_id FROM passed)) AND data.expires_at <= statement_timestamp()
            ), ready_rows AS (
                SELECT ctid AS row FROM {ready} WHERE id = ANY (ARRAY(SELECT id FROM expired)) FOR UPDATE SKIP LOCKED
            ), scheduled_rows AS (
                SELECT ctid AS row FROM {scheduled} WHERE id = ANY (ARRAY(SELECT id FROM expired))
                FOR UPDATE SKIP LOCKED
            ), waiting_rows AS (
                SELECT ctid AS row FROM {waiting} WHERE id = ANY (ARRAY(SELECT id FROM expired)) FOR UPDATE SKIP LOCKED
            ), from_ready AS (
                DELETE FROM {ready} WHERE ctid = ANY (ARRAY(SELECT row FROM ready_rows))
                RETURNING id, queue, attempts, expiries, claimed_by AS worker, run_at, last_error, last_error_at
            ), from_scheduled AS (
                DELETE FROM {scheduled} WHERE ctid = ANY (ARRAY(SELECT row FROM scheduled_rows))
                RETURNING id, queue, attempts, expiries, claimed_by AS worker, run_at, last_error, last_error_at
            ), from_waiting AS MATERIALIZED (
                DELETE FROM {waiting} WHERE ctid = ANY (ARRAY(SELECT row FROM waiting_rows))
                RETURNING id, queue, attempts, expiries, claimed_by AS worker, run_at, last_error, last_error_at
            ), unwanted AS (
                DELETE FROM {dependency} AS edge WHERE edge.waiter_id IN (SELECT id FROM from_waiting)
            ), cancelled AS MATERIALIZED (
                SELECT * FROM from_ready UNION ALL SELECT * FROM from_scheduled UNION ALL SELECT * FROM from_waiting
            ), may_return AS MATERIALIZED (
                -- waiting, as this statement's snapshot sees them, but held by another transaction
                (SELECT id FROM {ready} WHERE id = ANY (ARRAY(SELECT id FROM expired))
                 UNION SELECT id FROM {scheduled} WHERE id = ANY (ARRAY(SELECT id FROM expired))
                 UNION SELECT id FROM {waiting} WHERE id = ANY (ARRAY(SELECT id FROM expired))
                 EXCEPT SELECT id FROM cancelled)
                -- held by a worker: claims are few (one row per batch in flight), read whole
                UNION
                SELECT held.id
                FROM {claim} AS claim
                CROSS JOIN LATERAL unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                WHERE held.id = ANY (ARRAY(SELECT id FROM expired))
                  AND get_bit(claim.settled, held.position::int - 1) = 0
                  AND get_bit(claim.dropped, held.position::int - 1) = 0
            ), looked_again AS (
                UPDATE {deadline} SET expires_at = statement_timestamp() + ? * interval '1 millisecond'
                WHERE ctid = ANY (ARRAY(SELECT row FROM passed WHERE job_id IN (SELECT id FROM may_return)))
            ), gone AS (
                DELETE FROM {deadline}
                WHERE ctid = ANY (ARRAY(SELECT row FROM passed WHERE job_id NOT IN (SELECT id FROM may_return)))
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, queue, status, worker, run_at, finished_at, error,
                                       error_at, step)
                SELECT id, attempts, expiries, queue, 'cancelled', worker, run_at, clock_timestamp(),
                       'expired: its deadline (expiresAt) passed before it started', clock_timestamp(), {saved_step}
                FROM cancelled
            ), steps AS (
                DELETE FROM {step} AS step WHERE step.job_id IN (SELECT id FROM cancelled)
            )
            SELECT cancelled.id, cancelled.queue, cancelled.attempts, taken.deadlines
            FROM (SELECT count(*) AS deadlines FROM passed) AS taken
            LEFT JOIN cancelled ON true
            ORDER BY cancelled.id
            """;

    /**
     * Where a job lives now, read without locks: its status by home, or nothing when it is finished
     * or unknown. A cancel that found the job nowhere asks this before it gives up.
     */
    static final String JOB_LIVE_STATUS = """
            SELECT 'pending' FROM {ready} WHERE id = ?
            UNION ALL SELECT 'scheduled' FROM {scheduled} WHERE id = ?
            UNION ALL SELECT 'waiting' FROM {waiting} WHERE id = ?
            UNION ALL SELECT 'dead' FROM {dead} WHERE id = ?
            UNION ALL
            SELECT 'running' FROM {claim} AS claim
            WHERE claim.ids @> ARRAY[?::bigint]
              AND get_bit(claim.settled, array_position(claim.ids, ?::bigint) - 1) = 0
              AND get_bit(claim.dropped, array_position(claim.ids, ?::bigint) - 1) = 0
            """;

    /**
     * Moves scheduled jobs that have fallen due to ready, oldest first; the insert's trigger wakes
     * their queues' pollers on every node. SKIP LOCKED lets every runtime run it at once.
     */
    static final String JOB_PROMOTE_SCHEDULED = """
            WITH due AS (
                SELECT ctid AS row
                FROM {scheduled}
                WHERE run_at <= statement_timestamp()
                ORDER BY run_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), moved AS (
                DELETE FROM {scheduled} AS scheduled
                WHERE scheduled.ctid = ANY (ARRAY(SELECT row FROM due))
                RETURNING scheduled.*
            ), promoted AS (
                INSERT INTO {ready} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                     partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on,
                                     snoozes)
                SELECT id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                       partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on, snoozes
                FROM moved
                RETURNING queue
            )
            SELECT queue, count(*) AS jobs
            FROM promoted
            GROUP BY queue
            """;

    /**
     * Moves ready and scheduled jobs whose attempts reached their max_attempts (an operator lowered
     * it on the row) to dead, from ready and scheduled alike. Served by the exhausted indexes, which
     * hold only such rows and so are empty nearly always.
     */
    static final String JOB_RETIRE_EXHAUSTED = """
            WITH exhausted_ready AS (
                SELECT ctid AS row FROM {ready} WHERE attempts >= max_attempts LIMIT ? FOR UPDATE SKIP LOCKED
            ), exhausted_scheduled AS (
                SELECT ctid AS row FROM {scheduled} WHERE attempts >= max_attempts LIMIT ? FOR UPDATE SKIP LOCKED
            ), from_ready AS (
                DELETE FROM {ready} WHERE ctid = ANY (ARRAY(SELECT row FROM exhausted_ready))
                RETURNING id, queue, attempts, max_attempts, expiries, last_error, claimed_by, run_at
            ), from_scheduled AS (
                DELETE FROM {scheduled} WHERE ctid = ANY (ARRAY(SELECT row FROM exhausted_scheduled))
                RETURNING id, queue, attempts, max_attempts, expiries, last_error, claimed_by, run_at
            ), gone AS MATERIALIZED (
                SELECT id, queue, attempts, max_attempts, expiries, coalesce(last_error, 'attempts exhausted') AS error,
                       claimed_by, run_at
                FROM (SELECT * FROM from_ready UNION ALL SELECT * FROM from_scheduled) AS moved
            ), buried AS (
                INSERT INTO {dead} (id, queue, attempts, max_attempts, expiries, last_error, last_error_at, claimed_by,
                                    finished_at)
                SELECT id, queue, attempts, max_attempts, expiries, error, clock_timestamp(), claimed_by,
                       clock_timestamp()
                FROM gone
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, queue, status, worker, run_at, finished_at, error)
                SELECT id, attempts, expiries, queue, 'dead', claimed_by, run_at, clock_timestamp(), error FROM gone
            )
            SELECT id, queue, attempts, max_attempts FROM gone
            """;

    /**
     * Retries dead jobs (at most {@code ?} of them, {@code SKIP LOCKED}) matching the operator's
     * filters (ids, queue, error text, error kind; each ignored when null) that died no later than
     * the cutoff: each moves to ready with its attempts and expiries reset, keeping its last error
     * (and its saved step, to resume from); the trigger wakes the queues' pollers.
     */
    static final String JOB_RETRY_DEAD = """
            WITH batch AS (
                SELECT id
                FROM {dead}
                WHERE (?::bigint[] IS NULL OR id = ANY(?::bigint[]))
                  AND (?::text IS NULL OR queue = ?)
                  AND (?::text IS NULL OR strpos(lower(last_error), lower(?)) > 0)
                  AND (?::text IS NULL OR {error_kind} = ?)
                  AND finished_at <= ?::timestamptz
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), revived AS MATERIALIZED (
                DELETE FROM {dead} AS dead
                WHERE dead.id = ANY (ARRAY(SELECT id FROM batch))
                RETURNING dead.*
            ), retried AS (
                INSERT INTO {ready} (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                     partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on)
                SELECT revived.id, revived.queue, data.priority, now(), 0, revived.max_attempts, 0, data.partition_key,
                       data.partition_bucket, data.fairness_key, revived.last_error, revived.last_error_at,
                       revived.claimed_by, CASE WHEN data.batch_id IS NOT NULL THEN true END
                FROM revived
                CROSS JOIN LATERAL (SELECT job.priority, job.partition_key, job.partition_bucket, job.fairness_key,
                                           job.batch_id
                                    FROM {job_data} AS job WHERE job.id = revived.id OFFSET 0) AS data
                RETURNING id
            ), recounted AS (
                UPDATE {batch} AS counted
                SET dead = counted.dead - members.n
                FROM (SELECT data.batch_id, count(*)::int AS n
                      FROM {job_data} AS data
                      JOIN {batch} AS of ON of.id = data.batch_id
                      WHERE data.id = ANY (ARRAY(SELECT id FROM revived))
                        AND data.id IS DISTINCT FROM of.on_success_id AND data.id IS DISTINCT FROM of.on_finish_id
                      GROUP BY data.batch_id) AS members
                WHERE counted.id = members.batch_id
            ), noted AS (
                -- a deadline that passed while the job was dead is swept again: the retry waits in ready
                INSERT INTO {deadline} (expires_at, job_id)
                SELECT data.expires_at, data.id
                FROM {job_data} AS data
                WHERE data.id = ANY (ARRAY(SELECT id FROM revived)) AND data.expires_at IS NOT NULL
                ON CONFLICT DO NOTHING
            )
            SELECT count(*) AS retried FROM retried
            """;

    /**
     * Cancels dead jobs of one queue (at most {@code ?}, {@code SKIP LOCKED}) matching the ids and
     * error kind (each ignored when null) that died no later than the cutoff: each moves to a
     * {@code cancelled} outcome row keeping its last error and its time of death (retention counts
     * from it, as before the cancel), and its saved step goes.
     */
    static final String JOB_CANCEL_DEAD = """
            WITH batch AS (
                SELECT id
                FROM {dead}
                WHERE (?::bigint[] IS NULL OR id = ANY(?::bigint[]))
                  AND queue = ?
                  AND (?::text IS NULL OR {error_kind} = ?)
                  AND finished_at <= ?::timestamptz
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), closed AS MATERIALIZED (
                DELETE FROM {dead} AS dead
                WHERE dead.id = ANY (ARRAY(SELECT id FROM batch))
                RETURNING dead.*
            ), logged AS (
                INSERT INTO {outcome} (job_id, attempt, expiries, queue, status, worker, started_at, finished_at, error,
                                       error_at, step)
                SELECT id, attempts, expiries, queue, 'cancelled', claimed_by, started_at, finished_at, last_error,
                       last_error_at, {saved_step}
                FROM closed
            ), steps AS (
                DELETE FROM {step} WHERE job_id IN (SELECT id FROM closed)
            ), recounted AS (
                UPDATE {batch} AS counted
                SET dead = counted.dead - members.n, cancelled = counted.cancelled + members.n
                FROM (SELECT data.batch_id, count(*)::int AS n
                      FROM {job_data} AS data
                      JOIN {batch} AS of ON of.id = data.batch_id
                      WHERE data.id = ANY (ARRAY(SELECT id FROM closed))
                        AND data.id IS DISTINCT FROM of.on_success_id AND data.id IS DISTINCT FROM of.on_finish_id
                      GROUP BY data.batch_id) AS members
                WHERE counted.id = members.batch_id
            )
            SELECT count(*) AS cancelled FROM closed
            """;

    /**
     * Records the step a running job reached, fenced by its claim row: the row is locked (a
     * cancel's or an end's update of it waits, and this waits for theirs), the position must be
     * open, and the claim is flagged so its ends clear the step. Returns the job's id when saved.
     */
    static final String JOB_SAVE_STEP = """
            WITH held AS (
                SELECT token, has_steps
                FROM {claim}
                WHERE token = ? AND get_bit(settled, ? - 1) = 0 AND get_bit(dropped, ? - 1) = 0
                FOR NO KEY UPDATE
            ), flagged AS (
                UPDATE {claim} AS claim
                SET has_steps = true
                FROM held
                WHERE claim.token = held.token AND NOT held.has_steps
            )
            INSERT INTO {step} (job_id, step)
            SELECT ?, ? FROM held
            ON CONFLICT (job_id) DO UPDATE SET step = excluded.step
            RETURNING job_id
            """;

    /**
     * Which of the given claims still exist: a renewal that skipped a claim locked by another
     * session (an end being written, a transactional handler's completion) tells it from a claim
     * the sweeper took. A plain read, so it waits on no lock.
     */
    static final String CLAIMS_STILL_HELD = """
            SELECT token FROM {claim} WHERE token = ANY (?::bigint[])
            """;

    /**
     * Extends a running job's lease ({@code JobContext.extendLease}): its whole claim's, to at
     * least {@code ?} milliseconds from the database's current time, while the position is open.
     */
    static final String JOB_EXTEND_LEASE = """
            UPDATE {claim}
            SET lease_expires_at = greatest(lease_expires_at, clock_timestamp() + ? * interval '1 millisecond')
            WHERE token = ? AND get_bit(settled, ? - 1) = 0 AND get_bit(dropped, ? - 1) = 0
            """;

    /**
     * Jobs per queue in each live home, read from the homes themselves: ready (with how many are
     * due and the oldest due time, through the two claim indexes), scheduled, running (each claim's
     * positions neither settled nor dropped, counted from its bits) and dead; the rows
     * {@link JobSql#QUEUE_DEPTH} returns.
     */
    static final String QUEUE_DEPTH = """
            SELECT queue, 'pending' AS status, sum(jobs) AS jobs, sum(due) AS due,
                   coalesce(extract(epoch FROM now() - min(oldest_due)), 0) AS lag_seconds
            FROM (SELECT queue, count(*) AS jobs, count(*) FILTER (WHERE run_at <= now()) AS due,
                         min(run_at) FILTER (WHERE run_at <= now()) AS oldest_due
                  FROM {ready} AS ready WHERE {ready_unkeyed} GROUP BY queue
                  UNION ALL
                  SELECT queue, count(*), count(*) FILTER (WHERE run_at <= now()),
                         min(run_at) FILTER (WHERE run_at <= now())
                  FROM {ready} AS ready WHERE {ready_keyed} GROUP BY queue) AS pending
            GROUP BY queue
            UNION ALL
            SELECT queue, 'scheduled', count(*), 0, 0 FROM {scheduled} GROUP BY queue
            UNION ALL
            SELECT queue, 'waiting', count(*), 0, 0 FROM {waiting} GROUP BY queue
            UNION ALL
            SELECT queue, 'running', sum(length(settled) - bit_count(settled | dropped)), 0, 0
            FROM {claim} GROUP BY queue
            UNION ALL
            SELECT queue, 'dead', count(*), 0, 0 FROM {dead} GROUP BY queue
            """;

    /**
     * Running jobs, oldest claim first, read from the claims (the open positions of at most
     * {@code ?} of them after the queue filter) before each is joined to its data.
     */
    static final String JOB_LIST_RUNNING = """
            SELECT running.id, running.queue, 'running' AS status, running.attempts, data.max_attempts,
                   running.worker AS claimed_by, running.lease_expires_at, running.run_at,
                   running.last_error, running.last_error_at,
                   data.created_at, running.expiries AS lease_expiries
            FROM (SELECT claim.queue, claim.worker, claim.lease_expires_at, claim.started_at, held.*
                  FROM {claim} AS claim
                  CROSS JOIN LATERAL unnest(claim.ids, claim.attempts, claim.expiries, claim.run_ats, claim.errors,
                                            claim.error_ats)
                       WITH ORDINALITY AS held(id, attempts, expiries, run_at, last_error, last_error_at, position)
                  WHERE (?::text IS NULL OR claim.queue = ?)
                    AND get_bit(claim.settled, held.position::int - 1) = 0
                    AND get_bit(claim.dropped, held.position::int - 1) = 0
                  ORDER BY claim.started_at, held.id
                  LIMIT ?) AS running
            CROSS JOIN LATERAL (SELECT job.max_attempts, job.created_at FROM {job_data} AS job
                                WHERE job.id = running.id OFFSET 0) AS data
            ORDER BY running.started_at, running.id
            """;

    /** Dead jobs, newest first, read from workrow_dead (its limit first) and then joined to their data. */
    static final String JOB_LIST_DEAD = """
            SELECT dead.id, dead.queue, 'dead' AS status, dead.attempts, dead.max_attempts, dead.claimed_by,
                   NULL::timestamptz AS lease_expires_at, NULL::timestamptz AS run_at, dead.last_error,
                   dead.last_error_at, data.created_at, dead.expiries AS lease_expiries
            FROM (SELECT * FROM {dead}
                  WHERE (?::text IS NULL OR queue = ?)
                    AND (?::text IS NULL OR strpos(lower(last_error), lower(?)) > 0)
                  ORDER BY finished_at DESC
                  LIMIT ?) AS dead
            CROSS JOIN LATERAL (SELECT job.created_at FROM {job_data} AS job WHERE job.id = dead.id OFFSET 0) AS data
            ORDER BY dead.finished_at DESC
            """;

    /**
     * One job through the {@code workrow_job} view: its id is pushed into every home's arm. No
     * row is updated on this layout, so its last change is the latest of the times it carries
     * (created, claimed, finished, or failed and put back).
     */
    static final String JOB_FIND = """
            SELECT id, queue, status, partition_key, fairness_key, idempotency_key, priority, payload::text AS payload,
                   headers::text AS headers, run_at, attempts, max_attempts, lease_expiries, last_error,
                   last_error_at, step, claimed_by, lease_expires_at, created_at, started_at, finished_at,
                   greatest(created_at, started_at, finished_at, last_error_at) AS updated_at
            FROM {job}
            WHERE id = ?
            """;

    /**
     * The jobs job {@code ?} waited for, in the order named ({@code after} first), and the oldest
     * enqueue time among them: the bound of {@link #JOB_DEPENDENCY_RESULTS}.
     */
    static final String JOB_DEPENDENCIES = """
            SELECT listed.ids,
                   (SELECT min(dep.created_at) FROM {job_data} AS dep WHERE dep.id = ANY (listed.ids)) AS since
            FROM (SELECT coalesce(data.after_ids, '{}') || coalesce(data.after_settled_ids, '{}') AS ids
                  FROM {job_data} AS data WHERE data.id = ?) AS listed
            """;

    /** Jobs waiting for others, lowest id first, of queue {@code ?} (all when null), at most {@code ?}. */
    static final String JOB_LIST_WAITING = """
            SELECT waiting.id, waiting.queue, 'waiting' AS status, waiting.attempts, waiting.max_attempts,
                   NULL AS claimed_by, NULL::timestamptz AS lease_expires_at, waiting.run_at, waiting.last_error,
                   waiting.last_error_at, data.created_at, waiting.expiries AS lease_expiries
            FROM {waiting} AS waiting
            JOIN {job_data} AS data ON data.id = waiting.id
            WHERE (?::text IS NULL OR waiting.queue = ?)
            ORDER BY waiting.id
            LIMIT ?
            """;

    /**
     * The jobs job {@code ?} was enqueued to wait for (at most {@code ?}), in the order named, with
     * whether any end of each counts, and each one's status now (NULL past retention); one row
     * with a NULL {@code id} for a job that waited for none, and no row for a job that is not there.
     */
    static final String JOB_WAITS_FOR = """
            SELECT listed.dep_id AS id, job.queue, job.status, listed.settled
            FROM {job_data} AS data
            LEFT JOIN LATERAL (SELECT dep_id, false AS settled, n
                               FROM unnest(data.after_ids) WITH ORDINALITY AS named(dep_id, n)
                               UNION ALL
                               SELECT dep_id, true, 100000 + n
                               FROM unnest(data.after_settled_ids) WITH ORDINALITY AS named(dep_id, n)
                               ORDER BY 3
                               LIMIT ?) AS listed ON true
            LEFT JOIN LATERAL (SELECT job.queue, job.status FROM {job} AS job WHERE job.id = listed.dep_id
                               LIMIT 1) AS job ON true
            WHERE data.id = ?
            ORDER BY listed.n
            """;

    /**
     * The jobs still waiting for job {@code ?}, counted once, and at most {@code ?} of them (the
     * job's id again), lowest id first.
     */
    static final String JOB_WAITED_ON_BY = """
            WITH counted AS (
                SELECT count(*) AS total FROM {dependency} WHERE dep_id = ?
            )
            SELECT edge.waiter_id AS id, waiting.queue, edge.settled, counted.total
            FROM counted
            LEFT JOIN LATERAL (SELECT edge.waiter_id, edge.settled FROM {dependency} AS edge
                               WHERE edge.dep_id = ? ORDER BY edge.waiter_id LIMIT ?) AS edge ON true
            LEFT JOIN {waiting} AS waiting ON waiting.id = edge.waiter_id
            ORDER BY edge.waiter_id
            """;


    /**
     * The results of the completed jobs among {@code ?::bigint[]}, read from their outcome rows
     * on or after the oldest enqueue time among them (bound as it is, so older days are pruned).
     */
    static final String JOB_DEPENDENCY_RESULTS = """
            WITH wanted AS MATERIALIZED (SELECT DISTINCT id FROM unnest(?::bigint[]) AS wanted(id))
            SELECT outcome.job_id AS id, outcome.result::text AS result
            FROM {outcome} AS outcome
            WHERE outcome.job_id BETWEEN (SELECT min(id) FROM wanted) AND (SELECT max(id) FROM wanted)
              AND (outcome.job_id IN (SELECT id FROM wanted)) IS TRUE
              AND outcome.status = 'completed' AND outcome.result IS NOT NULL AND outcome.finished_at >= ?::timestamptz
            """;

    /** When job {@code ?} was enqueued: the lower bound of its outcomes' days, for {@link #JOB_RESULT}. */
    static final String JOB_CREATED_AT = """
            SELECT created_at FROM {job_data} WHERE id = ?
            """;

    /**
     * The result of job {@code ?} from its completion's outcome row. The job's enqueue time
     * ({@link #JOB_CREATED_AT}) is bound as it is, so that the planner prunes the days before it
     * when it plans the statement, and each day left is read through its BRIN by id.
     */
    static final String JOB_RESULT = """
            SELECT result::text AS result
            FROM {outcome}
            WHERE job_id = ? AND status = 'completed' AND finished_at >= ?::timestamptz
            LIMIT 1
            """;

    /**
     * Jobs finished per queue and minute: completions from the outcome log (only the days the
     * range reaches, each through its BRIN), deaths from workrow_dead (a job that died of an
     * expired lease has an {@code expired} outcome, and a retried one is no longer dead). The caller's minute ({@code ?}) is bound as it is, so that the planner prunes
     * the log's older days when it plans the statement: a bound computed from {@code now()} prunes
     * them only when it runs, and the plan is then costed over every day, high enough that
     * PostgreSQL compiles it with JIT (docs/performance.md, "Reads against a long history, on the
     * write-once layout").
     */
    static final String JOB_FINISHED_PER_MINUTE = """
            SELECT queue, date_trunc('minute', finished_at, 'UTC') AS minute,
                   count(*) FILTER (WHERE NOT died) AS completed, count(*) FILTER (WHERE died) AS dead
            FROM (SELECT queue, finished_at, false AS died FROM {outcome} WHERE status = 'completed'
                  UNION ALL
                  SELECT queue, finished_at, true FROM {dead}) AS finished
            WHERE finished_at >= ?::timestamptz AND finished_at >= date_trunc('minute', now() - interval '1 day', 'UTC')
            GROUP BY 1, 2
            ORDER BY minute, queue
            """;

    /**
     * Creates the outcome log's partitions of the next {@code ?} days from the database's today
     * (UTC), moving rows of such a day out of the default partition first; returns the days created.
     */
    static final String OUTCOME_DAYS_ADD = """
            SELECT day
            FROM generate_series(0, ? - 1) AS ahead,
                 LATERAL (SELECT (statement_timestamp() AT TIME ZONE 'UTC')::date + ahead AS day) AS days
            WHERE {schema}.workrow_add_outcome_day(day)
            """;

    /**
     * The outcome log's days that ended more than {@code ?} milliseconds ago, oldest first, by the
     * name of their tables in the log's schema: attached, or left detached by a pass that failed
     * between its two steps. Retention detaches each ({@link #OUTCOME_DAY_DETACH}) and then drops
     * it ({@link #OUTCOME_DAY_DROP}), each in a transaction of its own, so the parent's lock is held
     * only for the detach and the files are unlinked after it is released.
     */
    static final String OUTCOME_DAYS_EXPIRED = """
            SELECT day.relname AS name
            FROM pg_class AS day
            WHERE day.relnamespace = (SELECT log.relnamespace FROM pg_class AS log WHERE log.oid = '{outcome}'::regclass)
              AND day.relkind = 'r'
              AND day.relname ~ '^workrow_outcome_[0-9]{8}$'
              AND (to_date(substr(day.relname, 17), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC'
                  <= statement_timestamp() - ? * interval '1 millisecond'
            ORDER BY day.relname
            """;

    /**
     * Deletes up to {@code ?} rows of the outcome log's default partition that finished more than
     * {@code ?} milliseconds ago: rows whose day had no partition when they were written (a dead
     * job cancelled long after it died keeps its time of death) are never in a day retention
     * drops. The partition stays near empty, so this is a few rows at most.
     */
    static final String OUTCOME_DEFAULT_PRUNE = """
            DELETE FROM {outcome}_default
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM {outcome}_default
                                    WHERE finished_at < statement_timestamp() - ? * interval '1 millisecond'
                                    LIMIT ?))
            """;

    /**
     * Detaches one day of the outcome log, if it is attached ({@code ?}: a name
     * {@link #OUTCOME_DAYS_EXPIRED} gave), as the tables' owner ({@code workrow_detach_outcome_day}, V13).
     */
    static final String OUTCOME_DAY_DETACH = """
            SELECT {schema}.workrow_detach_outcome_day(?)
            """;

    /** Drops one detached day of the outcome log, as the tables' owner ({@code workrow_drop_outcome_day}, V13). */
    static final String OUTCOME_DAY_DROP = """
            SELECT {schema}.workrow_drop_outcome_day(?)
            """;

    /**
     * Creates the next range partition of the job data when less than half of the newest is left
     * ({@code workrow_extend_job_data}, V13), at least {@code ?} ids large; the partition created
     * or NULL.
     */
    static final String JOB_DATA_EXTEND = """
            SELECT {schema}.workrow_extend_job_data(?)
            """;

    /**
     * Deletes up to {@code ?} dead jobs that died more than {@code ?} milliseconds ago, with their
     * saved steps (dead is the last home that keeps a step); their data goes with its id range.
     * Dead jobs are few by nature, so this is the one retention that deletes rows one by one.
     */
    /**
     * Deletes up to {@code ?} batches finished more than {@code ?} milliseconds ago: their members'
     * history goes by day, a batch row by age, one row per batch.
     */
    static final String BATCH_PRUNE = """
            DELETE FROM {batch}
            WHERE id = ANY (ARRAY(SELECT id FROM {batch}
                                  WHERE finished_at < statement_timestamp() - ? * interval '1 millisecond'
                                  ORDER BY finished_at
                                  LIMIT ?))
            """;

    static final String JOB_PRUNE_DEAD = """
            WITH old AS (
                SELECT id FROM {dead}
                WHERE finished_at < statement_timestamp() - ? * interval '1 millisecond'
                ORDER BY finished_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            ), steps AS (
                DELETE FROM {step} AS step WHERE step.job_id = ANY (ARRAY(SELECT id FROM old))
            )
            DELETE FROM {dead} AS dead
            WHERE dead.id = ANY (ARRAY(SELECT id FROM old))
            """;

    /** Whether the database answers and the job data is there (the health check). */
    static final String JOB_TABLE_CHECK = """
            SELECT 1 FROM {job_data} LIMIT 0
            """;

    /**
     * Retires the data of jobs finished more than {@code ?} milliseconds ago, whole id ranges at a
     * time ({@code workrow_retire_job_data}, V13); the partitions dropped.
     */
    static final String JOB_DATA_RETIRE = """
            SELECT name FROM {schema}.workrow_retire_job_data(statement_timestamp() - ? * interval '1 millisecond')
                AS name
            """;

    /**
     * An enqueue statement rendered for the members of a batch: their data carries the batch's id,
     * bound as the parameter after the eleven arrays, and their rows the flag that sends their
     * ends to the settling path, which counts them.
     */
    static String renderForBatch(String sql, SqlIdentifier schema) {
        return render(sql.replace("WITH {new_jobs},", "WITH {new_jobs}, member_of AS (SELECT ?::bigint AS id),")
                .replace("{batch_id}", "(SELECT id FROM member_of)").replace("{member}", "true"), schema);
    }

    /** A claim statement rendered to write one claim row per job claimed, each at position 1. */
    static String renderPerJob(String sql, SqlIdentifier schema) {
        return render(sql.replace("{claim_group}", "id").replace("{position}", "1")
                .replace("{claim_match}", "claim.first_id = taken.id"), schema);
    }

    /** Replaces the placeholders of every statement with SQL parts and quoted names in {@code schema}. */
    static String render(String sql, SqlIdentifier schema) {
        String prefix = schema.quoted() + ".workrow_";
        return renderShared(sql.replace("{claim_group}", "()").replace("{position}", "row_number() OVER (ORDER BY taken.id)")
                .replace("{claim_match}", "true")
                .replace("{claimable}", "{ready}").replace("{pending}", "true")
                .replace("{dead_jobs}", "{dead}").replace("{is_dead}", "true")
                .replace("{lock_match}", "job.ctid = candidate.row")
                .replace("{key_free_walk}", keyFree("walk")).replace("{key_free_heads}", keyFree("heads"))
                .replace("{locked_claims}", LOCKED_CLAIMS)
                .replace("{saved_step}", SAVED_STEP)
                .replace("{locked_claims_waiting}", LOCKED_CLAIMS.replace("FOR UPDATE SKIP LOCKED", "FOR UPDATE"))
                .replace("{settle}", SETTLE)
                .replace("{drop_keys}", DROP_KEYS).replace("{verdicts}", VERDICTS).replace("{ended}", ENDED_BEFORE)
                .replace("{workflow_verdict}", WORKFLOW_VERDICT).replace("{workflow_gate}", WORKFLOW_GATE)
                .replace("{ready_unkeyed}", UNKEYED).replace("{ready_keyed}", KEYED)
                .replace("{never_started}", NEVER_STARTED.replace("{home}", "ready"))
                .replace("{never_started_scheduled}", NEVER_STARTED.replace("{home}", "scheduled"))
                .replace("{new_jobs}", NEW_JOBS).replace("{fresh_jobs}", FRESH_JOBS)
                .replace("{batch_id_seq}", "'" + prefix + "batch_id_seq'")
                .replace("{batch_id}", "NULL::bigint").replace("{member}", "NULL::boolean")
                .replace("{job_data}", prefix + "job_data")
                .replace("{job_key}", prefix + "job_key")
                .replace("{ready}", prefix + "ready")
                .replace("{scheduled}", prefix + "scheduled")
                .replace("{waiting}", prefix + "waiting")
                .replace("{dependency}", prefix + "dependency")
                .replace("{batch}", prefix + "batch")
                .replace("{claim}", prefix + "claim")
                .replace("{outcome}", prefix + "outcome")
                .replace("{dead}", prefix + "dead")
                .replace("{key_running}", prefix + "key_running")
                .replace("{step}", prefix + "step")
                .replace("{deadline}", prefix + "deadline")
                .replace("{job_id_seq}", "'" + prefix + "job_id_seq'")
                .replace("{schema}", schema.quoted()), schema);
    }

    /** The placeholders every store's statements share: the tables beside the jobs', the channel. */
    private static String renderShared(String sql, SqlIdentifier schema) {
        return sql.replace("{error_kind}", ERROR_KIND).replace("{unkeyed}", JOB_ALIAS_UNKEYED)
                .replace("{keyed}", JOB_ALIAS_KEYED)
                .replace("{channel}", "'" + NotifyChannel.of(schema) + "'")
                .replace("{job}", schema.quoted() + ".workrow_job")
                .replace("{pause}", schema.quoted() + ".workrow_queue_pause")
                .replace("{hold}", schema.quoted() + ".workrow_hold")
                .replace("{queue_cap}", schema.quoted() + ".workrow_queue_cap")
                .replace("{cap_share}", schema.quoted() + ".workrow_cap_share")
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

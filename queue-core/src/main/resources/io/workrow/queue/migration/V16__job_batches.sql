-- Batches (JobQueue.batch()): any number of jobs with callbacks that run once when the batch is
-- done: docs/design/workflows.md. A batch is one row of counters, updated once per end statement
-- by the settle of its members' ends, never a row per member. Members carry their batch's id and
-- the waited_on flag, so their ends take the settling path; the callbacks wait in workrow_waiting
-- with no edge until the batch releases them.
SELECT set_config('search_path', quote_ident(current_schema()), true);

ALTER TABLE workrow_job_data ADD COLUMN batch_id bigint;

CREATE SEQUENCE workrow_batch_id_seq;

-- total counts the members the batch's enqueue inserted (a member whose idempotency key was taken
-- is not one); sealed once they are all in, in the enqueue's transaction. completed, dead and
-- cancelled count members that ended so; finished_at is set once, when they add up to total.
CREATE TABLE workrow_batch (
    id            bigint      PRIMARY KEY,
    total         integer     NOT NULL DEFAULT 0,
    sealed        boolean     NOT NULL DEFAULT false,
    completed     integer     NOT NULL DEFAULT 0,
    dead          integer     NOT NULL DEFAULT 0,
    cancelled     integer     NOT NULL DEFAULT 0,
    first_job_id  bigint,
    last_job_id   bigint,
    on_success_id bigint,
    on_finish_id  bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
) WITH (fillfactor = 50);

-- Retention deletes finished batches by age.
CREATE INDEX workrow_batch_finished_idx ON workrow_batch (finished_at) WHERE finished_at IS NOT NULL;

-- Finishes the sealed batches among batch_ids whose members have all ended: finished_at is set
-- under the row's lock, once; onFinish moves to ready (or scheduled, when it asked for a later
-- time), onSuccess too when no member ended dead or cancelled, else it is cancelled with the
-- counts. Returns the callbacks moved, with their new status.
CREATE FUNCTION workrow_finish_batches(batch_ids bigint[])
    RETURNS TABLE (job_id bigint, queue text, status text)
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH locked AS MATERIALIZED (
        SELECT batch.* FROM workrow_batch AS batch
        WHERE batch.id = ANY (batch_ids)
        ORDER BY batch.id
        FOR UPDATE
    ), finishing AS MATERIALIZED (
        UPDATE workrow_batch AS batch
        SET finished_at = clock_timestamp()
        FROM locked
        WHERE batch.id = locked.id AND locked.sealed AND locked.finished_at IS NULL
          AND locked.completed + locked.dead + locked.cancelled >= locked.total
        RETURNING batch.*
    ), callbacks AS MATERIALIZED (
        SELECT finishing.on_finish_id AS id, true AS runs, NULL::text AS why FROM finishing
        WHERE finishing.on_finish_id IS NOT NULL
        UNION ALL
        SELECT finishing.on_success_id, finishing.dead + finishing.cancelled = 0,
               'batch ' || finishing.id || ' ended with ' || finishing.dead || ' dead, ' || finishing.cancelled
               || ' cancelled'
        FROM finishing
        WHERE finishing.on_success_id IS NOT NULL
    ), moved AS MATERIALIZED (
        DELETE FROM workrow_waiting AS waiting
        USING callbacks
        WHERE waiting.id = callbacks.id
        RETURNING waiting.*, callbacks.runs, callbacks.why
    ), to_ready AS (
        INSERT INTO workrow_ready (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                   partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on)
        SELECT id, queue, priority, statement_timestamp(), attempts, max_attempts, expiries, partition_key,
               partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on
        FROM moved WHERE runs AND run_at <= statement_timestamp()
    ), to_scheduled AS (
        INSERT INTO workrow_scheduled (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                       partition_bucket, fairness_key, last_error, last_error_at, claimed_by,
                                       waited_on)
        SELECT id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
               partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on
        FROM moved WHERE runs AND run_at > statement_timestamp()
    ), logged AS (
        INSERT INTO workrow_outcome (job_id, attempt, expiries, queue, status, run_at, finished_at, error, error_at)
        SELECT id, attempts, expiries, queue, 'cancelled', run_at, clock_timestamp(), why, clock_timestamp()
        FROM moved WHERE NOT runs
    )
    SELECT moved.id, moved.queue,
           CASE WHEN NOT moved.runs THEN 'cancelled' WHEN moved.run_at > statement_timestamp() THEN 'scheduled'
                ELSE 'pending' END
    FROM moved;
END;
$$;

-- The settle counts the members of batches among the jobs it settles, each round (so members
-- cancelled down a chain count too), and finishes the batches whose members have all ended; a
-- cancelled callback is settled in the next round, as any cancelled job.
-- member_of, when given, holds each of ended_ids' batch as its claim read it (NULL: none), so the
-- first round need not read their data for it. The three-argument form stays for its callers.
DROP FUNCTION workrow_settle(bigint[], text[], boolean);

CREATE FUNCTION workrow_settle(ended_ids bigint[], ended_hows text[], counted boolean DEFAULT true,
                               member_of bigint[] DEFAULT NULL)
    RETURNS TABLE (job_id bigint, queue text, status text)
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
#variable_conflict use_column
DECLARE
    round_ids   bigint[] := ended_ids;
    round_hows  text[]   := ended_hows;
    waiter_ids  bigint[];
    waiter_met  integer[];
    waiter_by   bigint[];
    waiter_why  text[];
    moved       record;
    batches     bigint[];
    first_round boolean := true;
BEGIN
    WHILE cardinality(round_ids) > 0 LOOP
        -- The waiters first, in id order, then their edges: the order a cancel and the view's delete
        -- take them in (the waiting row, then its edges), so that neither waits on the other.
        PERFORM 1
        FROM workrow_waiting AS waiting
        WHERE waiting.id = ANY (ARRAY(SELECT DISTINCT edge.waiter_id FROM workrow_dependency AS edge
                                      WHERE edge.dep_id = ANY (round_ids)))
        ORDER BY waiting.id
        FOR UPDATE;
        WITH consumed AS (
            DELETE FROM workrow_dependency AS edge
            WHERE edge.dep_id = ANY (round_ids)
            RETURNING edge.dep_id, edge.waiter_id, edge.settled
        ), judged AS (
            SELECT consumed.waiter_id, count(*)::integer AS met,
                   min(consumed.dep_id) FILTER (WHERE NOT consumed.settled AND ended.how <> 'completed') AS failed_by
            FROM consumed
            JOIN unnest(round_ids, round_hows) AS ended(id, how) ON ended.id = consumed.dep_id
            GROUP BY consumed.waiter_id
        )
        SELECT array_agg(judged.waiter_id ORDER BY judged.waiter_id), array_agg(judged.met ORDER BY judged.waiter_id),
               array_agg(judged.failed_by ORDER BY judged.waiter_id),
               array_agg(CASE WHEN judged.failed_by IS NULL THEN NULL
                              WHEN ended.how = 'dead' THEN 'dependency ' || judged.failed_by || ' is dead'
                              ELSE 'dependency ' || judged.failed_by || ' was cancelled' END
                         ORDER BY judged.waiter_id)
        INTO waiter_ids, waiter_met, waiter_by, waiter_why
        FROM judged
        LEFT JOIN unnest(round_ids, round_hows) AS ended(id, how) ON ended.id = judged.failed_by;

        -- The batches of this round's jobs count them (callbacks are not members; a first round
        -- not made terminal by this call was counted when it was), and each batch whose members
        -- have all ended now releases its callbacks, once: its row is locked and finished_at set
        -- under the lock.
        WITH ended AS (
            SELECT ended.id, ended.how,
                   CASE WHEN first_round AND workrow_settle.member_of IS NOT NULL THEN ended.given_batch
                        ELSE (SELECT data.batch_id FROM workrow_job_data AS data WHERE data.id = ended.id) END
                       AS batch_id
            FROM unnest(round_ids, round_hows,
                        CASE WHEN first_round THEN workrow_settle.member_of END) AS ended(id, how, given_batch)
            WHERE counted OR NOT first_round
        ), deltas AS (
            SELECT ended.batch_id, count(*) FILTER (WHERE ended.how = 'completed')::int AS completed,
                   count(*) FILTER (WHERE ended.how = 'dead')::int AS dead,
                   count(*) FILTER (WHERE ended.how = 'cancelled')::int AS cancelled
            FROM ended
            JOIN workrow_batch AS batch ON batch.id = ended.batch_id
            WHERE ended.id IS DISTINCT FROM batch.on_success_id AND ended.id IS DISTINCT FROM batch.on_finish_id
            GROUP BY ended.batch_id
        ), locked AS MATERIALIZED (
            SELECT batch.id FROM workrow_batch AS batch
            WHERE batch.id IN (SELECT batch_id FROM deltas)
            ORDER BY batch.id
            FOR UPDATE
        ), counted AS (
            UPDATE workrow_batch AS batch
            SET completed = batch.completed + deltas.completed, dead = batch.dead + deltas.dead,
                cancelled = batch.cancelled + deltas.cancelled
            FROM deltas
            WHERE batch.id = deltas.batch_id AND batch.id IN (SELECT id FROM locked)
            RETURNING batch.id
        )
        SELECT array_agg(id) INTO batches FROM counted;

        round_ids := '{}';
        round_hows := '{}';
        first_round := false;

        IF batches IS NOT NULL THEN
            FOR moved IN SELECT * FROM workrow_finish_batches(batches) LOOP
                job_id := moved.job_id;
                queue := moved.queue;
                status := moved.status;
                RETURN NEXT;
                IF moved.status = 'cancelled' THEN
                    round_ids := round_ids || moved.job_id;
                    round_hows := round_hows || 'cancelled'::text;
                END IF;
            END LOOP;
        END IF;
        CONTINUE WHEN waiter_ids IS NULL;

        FOR moved IN
            WITH judged AS (
                SELECT * FROM unnest(waiter_ids, waiter_met, waiter_by, waiter_why) AS judged(id, met, failed_by, why)
            ), locked AS MATERIALIZED (
                SELECT waiting.id, waiting.deps_left, judged.met, judged.failed_by, judged.why
                FROM workrow_waiting AS waiting
                JOIN judged ON judged.id = waiting.id
                ORDER BY waiting.id
                FOR UPDATE OF waiting
            ), released AS MATERIALIZED (
                DELETE FROM workrow_waiting AS waiting
                USING locked
                WHERE waiting.id = locked.id AND locked.failed_by IS NULL AND locked.deps_left = locked.met
                RETURNING waiting.*
            ), counted AS (
                UPDATE workrow_waiting AS waiting
                SET deps_left = locked.deps_left - locked.met
                FROM locked
                WHERE waiting.id = locked.id AND locked.failed_by IS NULL AND locked.deps_left > locked.met
            ), doomed AS MATERIALIZED (
                DELETE FROM workrow_waiting AS waiting
                USING locked
                WHERE waiting.id = locked.id AND locked.failed_by IS NOT NULL
                RETURNING waiting.*, locked.why
            ), unwanted AS (
                DELETE FROM workrow_dependency AS edge
                WHERE edge.waiter_id IN (SELECT id FROM doomed)
            ), to_ready AS (
                INSERT INTO workrow_ready (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                                           partition_bucket, fairness_key, last_error, last_error_at, claimed_by,
                                           waited_on)
                SELECT id, queue, priority, statement_timestamp(), attempts, max_attempts, expiries, partition_key,
                       partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on
                FROM released WHERE run_at <= statement_timestamp()
            ), to_scheduled AS (
                INSERT INTO workrow_scheduled (id, queue, priority, run_at, attempts, max_attempts, expiries,
                                               partition_key, partition_bucket, fairness_key, last_error,
                                               last_error_at, claimed_by, waited_on)
                SELECT id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                       partition_bucket, fairness_key, last_error, last_error_at, claimed_by, waited_on
                FROM released WHERE run_at > statement_timestamp()
            ), logged AS (
                INSERT INTO workrow_outcome (job_id, attempt, expiries, queue, status, run_at, finished_at, error,
                                             error_at)
                SELECT id, attempts, expiries, queue, 'cancelled', run_at, clock_timestamp(), why, clock_timestamp()
                FROM doomed
            )
            SELECT released.id, released.queue,
                   CASE WHEN released.run_at > statement_timestamp() THEN 'scheduled' ELSE 'pending' END AS status,
                   NULL::boolean AS waited_on
            FROM released
            UNION ALL
            SELECT doomed.id, doomed.queue, 'cancelled', doomed.waited_on FROM doomed
        LOOP
            job_id := moved.id;
            queue := moved.queue;
            status := moved.status;
            RETURN NEXT;
            IF moved.status = 'cancelled' THEN
                round_ids := round_ids || moved.id;
                round_hows := round_hows || 'cancelled'::text;
            END IF;
        END LOOP;
    END LOOP;
END;
$$;

CREATE OR REPLACE FUNCTION workrow_retire_job_data(cutoff timestamptz) RETURNS SETOF text
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT AS
$$
DECLARE
    range        record;
    last_created timestamptz;
    candidates   text[] := '{}';
BEGIN
    -- Looked for without the lock first, so that a pass with nothing to retire holds nothing up;
    -- each candidate is looked at again under the lock.
    FOR range IN
        WITH bounds AS (
            SELECT child.relname AS name,
                   regexp_match(pg_get_expr(child.relpartbound, child.oid),
                                'FROM \((MINVALUE|''-?\d+'')\) TO \(''(-?\d+)''\)') AS bounds
            FROM pg_inherits
            JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid
            WHERE pg_inherits.inhparent = 'workrow_job_data'::regclass
        )
        SELECT name, bounds[2]::bigint AS high FROM bounds
        WHERE bounds IS NOT NULL
          AND bounds[2]::bigint < (SELECT max(bounds[2]::bigint) FROM bounds WHERE bounds IS NOT NULL)
          -- every id of the range drawn: none can still land in it
          AND bounds[2]::bigint <= (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
                                    FROM workrow_job_id_seq)
        ORDER BY high
    LOOP
        EXECUTE format('SELECT created_at FROM %I ORDER BY id DESC LIMIT 1', range.name) INTO last_created;
        IF last_created IS NULL OR last_created < cutoff THEN
            candidates := candidates || range.name::text;
        END IF;
    END LOOP;
    IF cardinality(candidates) > 0 THEN
    LOCK TABLE workrow_job_data IN ACCESS EXCLUSIVE MODE;
    FOR range IN
        SELECT child.relname AS name,
               CASE WHEN bounds[1] = 'MINVALUE' THEN '-9223372036854775808'::bigint
                    ELSE btrim(bounds[1], '''')::bigint END AS low,
               bounds[2]::bigint AS high
        FROM pg_inherits
        JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid
        CROSS JOIN LATERAL regexp_match(pg_get_expr(child.relpartbound, child.oid),
                                        'FROM \((MINVALUE|''-?\d+'')\) TO \(''(-?\d+)''\)') AS bounds
        WHERE pg_inherits.inhparent = 'workrow_job_data'::regclass
          AND child.relname = ANY (candidates)
        ORDER BY high
    LOOP
        EXECUTE format('SELECT created_at FROM %I ORDER BY id DESC LIMIT 1', range.name) INTO last_created;
        CONTINUE WHEN last_created >= cutoff;
        EXECUTE format('ALTER TABLE workrow_job_data DETACH PARTITION %I', range.name);
        EXECUTE format($straggle$
            INSERT INTO workrow_job_data (id, queue, partition_key, partition_bucket, priority, idempotency_key,
                                          payload, headers, max_attempts, fairness_key, created_at, after_ids,
                                          after_settled_ids, batch_id)
            SELECT id, queue, partition_key, partition_bucket, priority, idempotency_key, payload, headers,
                   max_attempts, fairness_key, created_at, after_ids, after_settled_ids, batch_id
            FROM %I AS data
            WHERE data.id IN (SELECT id FROM workrow_ready WHERE id >= $1 AND id < $2
                              UNION SELECT id FROM workrow_scheduled WHERE id >= $1 AND id < $2
                              UNION SELECT id FROM workrow_waiting WHERE id >= $1 AND id < $2
                              UNION SELECT id FROM workrow_dead WHERE id >= $1 AND id < $2
                              UNION SELECT held.id
                                    FROM workrow_claim AS claim,
                                         unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                                    WHERE held.id >= $1 AND held.id < $2
                                      AND get_bit(claim.settled, held.position::int - 1) = 0
                                      AND get_bit(claim.dropped, held.position::int - 1) = 0
                              UNION SELECT job_id FROM workrow_outcome
                                    WHERE job_id >= $1 AND job_id < $2 AND finished_at >= $3)
            $straggle$, range.name) USING range.low, range.high, cutoff;
        DELETE FROM workrow_job_key AS key
        WHERE key.job_id >= range.low AND key.job_id < range.high
          AND NOT EXISTS (SELECT 1 FROM workrow_job_data_default AS kept WHERE kept.id = key.job_id);
        EXECUTE format('DROP TABLE %I', range.name);
        RETURN NEXT range.name;
    END LOOP;
    END IF;
    -- The default partition's stragglers, once finished before the cutoff, without the lock: a job
    -- moves between homes in one statement, so one snapshot sees it in exactly one of them.
    WITH open_positions AS MATERIALIZED (
        SELECT held.id
        FROM workrow_claim AS claim,
             unnest(claim.ids) WITH ORDINALITY AS held(id, position)
        WHERE get_bit(claim.settled, held.position::int - 1) = 0
          AND get_bit(claim.dropped, held.position::int - 1) = 0
    ), gone AS (
        DELETE FROM workrow_job_data_default AS data
        WHERE data.created_at < cutoff
          AND NOT EXISTS (SELECT 1 FROM workrow_ready WHERE id = data.id)
          AND NOT EXISTS (SELECT 1 FROM workrow_scheduled WHERE id = data.id)
          AND NOT EXISTS (SELECT 1 FROM workrow_waiting WHERE id = data.id)
          AND NOT EXISTS (SELECT 1 FROM workrow_dead WHERE id = data.id)
          AND data.id NOT IN (SELECT id FROM open_positions)
          AND NOT EXISTS (SELECT 1 FROM workrow_outcome WHERE job_id = data.id AND finished_at >= cutoff)
        RETURNING data.id
    )
    DELETE FROM workrow_job_key AS key
    USING gone
    WHERE key.job_id = gone.id;
END;
$$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION workrow_retire_job_data(timestamptz) SET search_path = %I, pg_temp',
                   current_schema());
END;
$$;

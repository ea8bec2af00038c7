-- Jobs that wait for other jobs (JobRequest.after / afterSettled): docs/design/workflows.md.
--
-- A waiting job lives in workrow_waiting, not claimable and in no claim index, with a counter of
-- the dependencies still open. Each open dependency is an edge in workrow_dependency, deleted when
-- it is used up. Whatever makes a job terminal (its end, the sweeper, a cancel, the retirer, a
-- delete) settles its edges in the same transaction, after it has locked the job's home:
-- workrow_settle releases each waiter whose counter reaches zero (read from the locked row) or
-- cancels it, and cancels on down the chain. A job someone waits on carries waited_on (a flag on
-- its ready, scheduled and waiting rows, a bit per position on its claim row), so that the ends of
-- jobs nobody waits on stay the lean statements they were. A dependent enqueued while its
-- dependency runs is registered at the producer's commit (workrow_register_dependencies).
SELECT set_config('search_path', quote_ident(current_schema()), true);

-- What a job was enqueued to wait for, in request order: written once, for the job's page and
-- for its handler's JobContext.dependencyResults.
ALTER TABLE workrow_job_data ADD COLUMN after_ids bigint[], ADD COLUMN after_settled_ids bigint[];

-- NULL: nobody waits on this job (no cost: the rows carry a null bitmap already).
ALTER TABLE workrow_ready ADD COLUMN waited_on boolean;
ALTER TABLE workrow_scheduled ADD COLUMN waited_on boolean;
-- Bit p-1: the job at position p has dependents. NULL: no job of the claim has.
ALTER TABLE workrow_claim ADD COLUMN waited_on bit varying;

-- A job waiting for others: the ready row's columns (run_at is the due time it asked for), the
-- dependencies still open, and whether its edges are still to be registered at its producer's
-- commit (only ever true inside that transaction). Decrements under fan-in stay HOT.
CREATE TABLE workrow_waiting (
    LIKE workrow_ready INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    deps_left    integer NOT NULL CHECK (deps_left >= 1),
    unregistered boolean NOT NULL DEFAULT false,
    PRIMARY KEY (id)
) WITH (fillfactor = 70);

CREATE INDEX workrow_waiting_queue_idx ON workrow_waiting (queue);
CREATE INDEX workrow_waiting_unregistered_idx ON workrow_waiting (id) WHERE unregistered;

-- The live edges: waiter_id waits for dep_id. settled: any end releases (afterSettled), else only
-- a completion does and a dead or cancelled dependency cancels the waiter. An end finds its own
-- dependents by the primary key's prefix, so its cost is proportional to them.
CREATE TABLE workrow_dependency (
    dep_id    bigint  NOT NULL,
    waiter_id bigint  NOT NULL,
    settled   boolean NOT NULL,
    PRIMARY KEY (dep_id, waiter_id)
);

-- A waiter's own edges: registering them at commit, dropping them when it is cancelled.
CREATE INDEX workrow_dependency_waiter_idx ON workrow_dependency (waiter_id);

-- Settles the edges of jobs that just became terminal (ended_ids, each 'completed', 'dead' or
-- 'cancelled' in ended_hows), in rounds: a round locks the waiters of its jobs in id order,
-- consumes their edges and decides from the counters of the locked rows (never the snapshot's, or
-- two ends at once would both see the old count and neither release): a waiter whose count
-- reaches zero moves to ready (or scheduled, when it asked for a later time), the others count
-- down; a waiter of a dead or cancelled job through after() is cancelled, with its own remaining
-- edges, and the cancelled ones are the next round's jobs. Each round is a statement of its own,
-- begun after the jobs' homes were locked by this transaction, so every edge registered before
-- is seen. counted says whether this call made ended_ids terminal itself (false when it settles,
-- for a new dependent, jobs that ended earlier: their batches counted them then); V16 counts
-- batch members by it. Returns the waiters released and cancelled, with their new status. A released job is due
-- from the statement's time, the time the ready row's insert trigger wakes the pollers by (a
-- later clock_timestamp() would be read as not yet due, and wake no one).
CREATE FUNCTION workrow_settle(ended_ids bigint[], ended_hows text[], counted boolean DEFAULT true)
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

        round_ids := '{}';
        round_hows := '{}';
        EXIT WHEN waiter_ids IS NULL;

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
            IF moved.status = 'cancelled' AND moved.waited_on THEN
                round_ids := round_ids || moved.id;
                round_hows := round_hows || 'cancelled'::text;
            END IF;
        END LOOP;
    END LOOP;
END;
$$;

-- Registers, at the commit of the transaction that enqueued them, the edges of its waiting jobs:
-- runs once per transaction (the first of its rows' deferred triggers does all of them; the others
-- find theirs done). The end of a dependency cannot see an edge before its producer commits, and
-- the producer's transaction may be long, so the edge is made known here, for the moment of the
-- commit only: each dependency's live home is flagged (waited_on), which locks it until the
-- commit, so its end either comes after and sees the edge, or came before and is seen here, when
-- the dependency is settled at once. A dependency found in no live home and not ended was moving
-- between homes and is looked for again. Locks are taken with a short lock_timeout and the pass is
-- tried again, so a commit never deadlocks with the ends it waits for.
CREATE FUNCTION workrow_register_dependencies() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
DECLARE
    waiters     bigint[];
    wanted      bigint[];
    pending     bigint[];
    located     bigint[];
    ended_ids   bigint[];
    ended_hows  text[];
    timeout     text := current_setting('lock_timeout');
    passes      integer := 0;
    started     timestamptz := clock_timestamp();
    missing     bigint[];
    pass_start  bigint[];
BEGIN
    SELECT array_agg(id) INTO waiters FROM workrow_waiting WHERE unregistered;
    IF waiters IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(DISTINCT dep_id) INTO wanted FROM workrow_dependency WHERE waiter_id = ANY (waiters);
    pending := coalesce(wanted, '{}');
    WHILE cardinality(pending) > 0 LOOP
        passes := passes + 1;
        IF clock_timestamp() - started > interval '30 seconds' THEN
            RAISE EXCEPTION 'could not register the dependencies % of waiting jobs % at commit within 30 s: their'
                ' rows stayed locked or they kept moving between homes; the transaction can be tried again',
                pending, waiters
                USING ERRCODE = 'serialization_failure';
        END IF;
        IF passes > 1 THEN
            -- A job between homes is there again as soon as its move commits.
            PERFORM pg_sleep(0.001 * least(passes, 50) * (0.5 + random()));
        END IF;
        pass_start := pending;
        BEGIN
            PERFORM set_config('lock_timeout', '100ms', true);
            -- By the BRIN of ids over the range, each row tested in a hashed set (IS TRUE keeps it
            -- one): "= ANY" would compare every row with every id.
            WITH flagged AS (
                UPDATE workrow_ready SET waited_on = true
                WHERE id BETWEEN (SELECT min(p) FROM unnest(pending) AS p) AND (SELECT max(p) FROM unnest(pending) AS p)
                  AND (id IN (SELECT unnest(pending))) IS TRUE
                RETURNING id)
            SELECT array_agg(id) INTO located FROM flagged;
            pending := ARRAY(SELECT unnest(pending) EXCEPT SELECT unnest(located));
            WITH flagged AS (
                UPDATE workrow_scheduled SET waited_on = true
                WHERE id BETWEEN (SELECT min(p) FROM unnest(pending) AS p) AND (SELECT max(p) FROM unnest(pending) AS p)
                  AND (id IN (SELECT unnest(pending))) IS TRUE
                RETURNING id)
            SELECT array_agg(id) INTO located FROM flagged;
            pending := ARRAY(SELECT unnest(pending) EXCEPT SELECT unnest(located));
            WITH flagged AS (UPDATE workrow_waiting SET waited_on = true WHERE id = ANY (pending) RETURNING id)
            SELECT array_agg(id) INTO located FROM flagged;
            pending := ARRAY(SELECT unnest(pending) EXCEPT SELECT unnest(located));
            IF cardinality(pending) > 0 THEN
                -- Running: the bits of its open positions, set on the claim row's newest version.
                WITH flagged AS (
                    UPDATE workrow_claim AS claim
                    SET waited_on = coalesce(
                            (SELECT coalesce(claim.waited_on, claim.settled # claim.settled)
                                    | bit_or(set_bit(claim.settled # claim.settled, held.position::int - 1, 1))
                             FROM unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                             WHERE held.id = ANY (pending)
                               AND get_bit(claim.settled, held.position::int - 1) = 0
                               AND get_bit(claim.dropped, held.position::int - 1) = 0),
                            claim.waited_on)
                    WHERE claim.ids && pending
                    RETURNING (SELECT array_agg(held.id)
                               FROM unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                               WHERE held.id = ANY (pending)
                                 AND get_bit(claim.settled, held.position::int - 1) = 0
                                 AND get_bit(claim.dropped, held.position::int - 1) = 0) AS open
                )
                SELECT array_agg(id) INTO located FROM flagged, unnest(flagged.open) AS id;
                pending := ARRAY(SELECT unnest(pending) EXCEPT SELECT unnest(located));
            END IF;
            IF cardinality(pending) > 0 THEN
                -- In no live home: ended (seen by this new snapshot), or between homes.
                SELECT array_agg(ended.id), array_agg(ended.how) INTO ended_ids, ended_hows
                FROM (SELECT dead.id, 'dead' AS how FROM workrow_dead AS dead WHERE dead.id = ANY (pending)
                      UNION ALL
                      SELECT outcome.job_id, outcome.status FROM workrow_outcome AS outcome
                      WHERE outcome.job_id BETWEEN (SELECT min(id) FROM unnest(pending) AS id)
                                               AND (SELECT max(id) FROM unnest(pending) AS id)
                        -- IS TRUE keeps the IN a hashed subplan: as a join, the planner would
                        -- guess the array's length and may loop over it for every row.
                        AND (outcome.job_id IN (SELECT unnest(pending))) IS TRUE
                        AND outcome.status IN ('completed', 'cancelled')
                        AND outcome.finished_at >= (SELECT min(data.created_at) FROM workrow_job_data AS data
                                                    WHERE data.id = ANY (pending))) AS ended;
                IF ended_ids IS NOT NULL THEN
                    -- Ended before this commit: its own end counted it, this settles the new edges only.
                    PERFORM workrow_settle(ended_ids, ended_hows, false);
                    pending := ARRAY(SELECT unnest(pending) EXCEPT SELECT unnest(ended_ids));
                END IF;
                SELECT array_agg(gone.id) INTO missing
                FROM unnest(pending) AS gone(id)
                WHERE NOT EXISTS (SELECT 1 FROM workrow_job_data AS data WHERE data.id = gone.id);
                IF missing IS NOT NULL THEN
                    RAISE EXCEPTION 'jobs % that waiting jobs % were enqueued after were deleted before the enqueue'
                        ' committed', missing, waiters USING ERRCODE = 'foreign_key_violation';
                END IF;
            END IF;
            PERFORM set_config('lock_timeout', timeout, true);
        EXCEPTION WHEN lock_not_available THEN
            PERFORM set_config('lock_timeout', timeout, true);
            PERFORM pg_sleep(0.005 * least(passes, 20) * (0.5 + random()));
            -- The pass was rolled back to its start: what it did is to do again.
            pending := pass_start;
        END;
    END LOOP;
    UPDATE workrow_waiting SET unregistered = false WHERE id = ANY (waiters) AND unregistered;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER workrow_waiting_registered
    AFTER INSERT ON workrow_waiting
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.unregistered)
    EXECUTE FUNCTION workrow_register_dependencies();

-- Idle workers wake when a waiting job is released to ready, as for every insert there.

CREATE OR REPLACE FUNCTION workrow_job_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
DECLARE
    live boolean := false;
BEGIN
    FOR pass IN 1..2 LOOP
        UPDATE workrow_claim
        SET dropped = set_bit(dropped, array_position(ids, OLD.id) - 1, 1)
        WHERE ids @> ARRAY[OLD.id]
          AND get_bit(settled, array_position(ids, OLD.id) - 1) = 0
          AND get_bit(dropped, array_position(ids, OLD.id) - 1) = 0;
        live := live OR FOUND;
        EXIT WHEN pass = 2;
        -- In the order jobs move between them, so a move that commits meanwhile lands in a home
        -- still to be looked at: waiting and scheduled jobs move to ready, ready ones to a claim.
        DELETE FROM workrow_waiting WHERE id = OLD.id;
        live := live OR FOUND;
        DELETE FROM workrow_scheduled WHERE id = OLD.id;
        live := live OR FOUND;
        DELETE FROM workrow_dead WHERE id = OLD.id;
        DELETE FROM workrow_ready WHERE id = OLD.id;
        live := live OR FOUND;
    END LOOP;
    -- What it waited for no longer releases it; what waits for it sees it cancelled. Its homes are
    -- locked by now, so the settle's statements see every edge registered before. Only a job
    -- deleted while live ends here (a finished or dead one was counted when it ended).
    DELETE FROM workrow_dependency WHERE waiter_id = OLD.id;
    PERFORM workrow_settle(ARRAY[OLD.id], ARRAY['cancelled'], live);
    DELETE FROM workrow_key_running
    WHERE queue = OLD.queue AND ordered_key = OLD.partition_key AND job_id = OLD.id;
    DELETE FROM workrow_outcome WHERE job_id = OLD.id;
    DELETE FROM workrow_step WHERE job_id = OLD.id;
    DELETE FROM workrow_job_key
    WHERE queue = OLD.queue AND idempotency_key = OLD.idempotency_key AND job_id = OLD.id;
    DELETE FROM workrow_job_data WHERE id = OLD.id;
    RETURN OLD;
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
                                          after_settled_ids)
            SELECT id, queue, partition_key, partition_bucket, priority, idempotency_key, payload, headers,
                   max_attempts, fairness_key, created_at, after_ids, after_settled_ids
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

-- The view: waiting jobs show as 'waiting'.
CREATE OR REPLACE VIEW workrow_job AS
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'scheduled'::text AS status, state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL::timestamptz AS lease_expires_at, NULL::bigint AS lease_token, data.created_at,
       NULL::timestamptz AS started_at, NULL::timestamptz AS finished_at, state.expiries AS lease_expiries,
       data.fairness_key, NULL::jsonb AS result
FROM workrow_scheduled AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'pending', state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, NULL, NULL, state.expiries, data.fairness_key, NULL
FROM workrow_ready AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'waiting', state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, NULL, NULL, state.expiries, data.fairness_key, NULL
FROM workrow_waiting AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, claim.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'running', held.run_at, held.attempts,
       data.max_attempts, held.last_error, held.last_error_at, step.step, claim.worker,
       claim.lease_expires_at, claim.token, data.created_at, claim.started_at, NULL, held.expiries,
       data.fairness_key, NULL
FROM workrow_claim AS claim
CROSS JOIN LATERAL unnest(claim.ids, claim.attempts, claim.expiries, claim.run_ats, claim.errors, claim.error_ats)
     WITH ORDINALITY AS held(id, attempts, expiries, run_at, last_error, last_error_at, position)
JOIN workrow_job_data AS data ON data.id = held.id
LEFT JOIN workrow_step AS step ON step.job_id = held.id
WHERE get_bit(claim.settled, held.position::int - 1) = 0 AND get_bit(claim.dropped, held.position::int - 1) = 0
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'dead', NULL, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, state.started_at, state.finished_at, state.expiries, data.fairness_key, NULL
FROM workrow_dead AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, outcome.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, outcome.status, outcome.run_at, outcome.attempt,
       data.max_attempts, outcome.error, outcome.error_at, outcome.step,
       outcome.worker, NULL, NULL, data.created_at, outcome.started_at, outcome.finished_at, outcome.expiries,
       data.fairness_key, outcome.result
FROM workrow_outcome AS outcome
JOIN workrow_job_data AS data ON data.id = outcome.job_id
WHERE outcome.status IN ('completed', 'cancelled');

-- Waiting jobs per queue, appended last (CREATE OR REPLACE keeps the columns before it).
CREATE OR REPLACE VIEW workrow_queue_stats AS
WITH homes AS (
    SELECT queue, 'pending' AS status, count(*) AS jobs,
           count(*) FILTER (WHERE run_at <= now()) AS due,
           min(run_at) FILTER (WHERE run_at <= now()) AS oldest_due, max(attempts) AS attempts
    FROM workrow_ready GROUP BY queue
    UNION ALL
    SELECT queue, 'scheduled', count(*), 0, NULL, max(attempts) FROM workrow_scheduled GROUP BY queue
    UNION ALL
    SELECT queue, 'waiting', count(*), 0, NULL, max(attempts) FROM workrow_waiting GROUP BY queue
    UNION ALL
    SELECT claim.queue, 'running', count(*), 0, NULL, max(held.attempts)
    FROM workrow_claim AS claim
    CROSS JOIN LATERAL unnest(claim.attempts) WITH ORDINALITY AS held(attempts, position)
    WHERE get_bit(claim.settled, held.position::int - 1) = 0 AND get_bit(claim.dropped, held.position::int - 1) = 0
    GROUP BY claim.queue
    UNION ALL
    SELECT queue, 'dead', count(*), 0, NULL, NULL FROM workrow_dead GROUP BY queue
    UNION ALL
    SELECT queue, status, count(*), 0, NULL, NULL FROM workrow_outcome
    WHERE status IN ('completed', 'cancelled') GROUP BY queue, status
)
SELECT homes.queue,
       coalesce(sum(jobs) FILTER (WHERE status = 'pending'), 0)::bigint   AS pending,
       coalesce(sum(due) FILTER (WHERE status = 'pending'), 0)::bigint    AS due,
       coalesce(sum(jobs) FILTER (WHERE status = 'running'), 0)::bigint   AS running,
       coalesce(sum(jobs) FILTER (WHERE status = 'completed'), 0)::bigint AS completed,
       coalesce(sum(jobs) FILTER (WHERE status = 'dead'), 0)::bigint      AS dead,
       coalesce(sum(jobs) FILTER (WHERE status = 'cancelled'), 0)::bigint AS cancelled,
       coalesce(now() - min(oldest_due), interval '0')                    AS oldest_due_age,
       coalesce(max(attempts), 0)                                         AS max_attempts_used,
       EXISTS (SELECT 1 FROM workrow_queue_pause pause WHERE pause.queue = homes.queue) AS paused,
       coalesce(sum(jobs) FILTER (WHERE status = 'scheduled'), 0)::bigint AS scheduled,
       coalesce(sum(jobs) FILTER (WHERE status = 'waiting'), 0)::bigint   AS waiting
FROM homes
GROUP BY homes.queue;

-- The retirer runs as its owner again with its search path fixed to this schema and pg_temp
-- (CREATE OR REPLACE set it to this schema alone): see V13, "Rights".
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION workrow_retire_job_data(timestamptz) SET search_path = %I, pg_temp',
                   current_schema());
END;
$$;

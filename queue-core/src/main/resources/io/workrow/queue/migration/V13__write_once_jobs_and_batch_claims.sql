-- The write-once layout (docs/storage-layout.md): a job's data is written once, and its state is
-- which table holds its live row. Every job of the old workrow_job moves to its new home in this
-- one transaction; the old table, stripped of its state columns, becomes the first partition of
-- workrow_job_data, so payloads are not copied. Old and new versions of Workrow may not run
-- together across this migration, producers included: an old node writes to workrow_job, which
-- is a view afterwards. A node of the old version that holds jobs vouches for them in
-- workrow_lease_holder while it runs, so the migration refuses to start while one does.

DO $$
DECLARE
    holder record;
BEGIN
    SELECT worker, renewed_until INTO holder
    FROM workrow_lease_holder WHERE renewed_until > clock_timestamp()
    ORDER BY renewed_until DESC LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'Workrow % still holds jobs (its leases run until %): stop every Workrow node before'
                        ' migrating to version 13, which old and new nodes cannot run across'
                        ' (docs/operations.md, "Upgrading Workrow''s schema")', holder.worker, holder.renewed_until;
    END IF;
END;
$$;

-- Every name below is Workrow's schema's, and the functions' search paths (SET ... FROM CURRENT)
-- are that schema alone: the migration's own path may go on to other schemas (Flyway keeps the
-- session's, often public), where another Workrow schema in the same database would be found by a
-- lookup such as to_regclass and taken for this one's.
SELECT set_config('search_path', quote_ident(current_schema()), true);

-- 1. The homes of a job's state.

-- A due job waiting for a claim. attempts counts the attempts spent; max_attempts is a copy of the
-- job's, so an operator can lower it here and the retirer finds exhausted jobs by index.
CREATE TABLE workrow_ready (
    id               bigint      NOT NULL,
    queue            text        NOT NULL,
    priority         smallint    NOT NULL,
    run_at           timestamptz NOT NULL,
    attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts     integer     NOT NULL CHECK (max_attempts >= 1),
    expiries         integer     NOT NULL DEFAULT 0,
    partition_key    text,
    partition_bucket smallint    NOT NULL,
    fairness_key     text        NOT NULL DEFAULT '',
    last_error       text,
    last_error_at    timestamptz,
    claimed_by       text
);

-- A job due later: the same columns. Promotion moves it to workrow_ready when it falls due.
CREATE TABLE workrow_scheduled (LIKE workrow_ready INCLUDING DEFAULTS INCLUDING CONSTRAINTS);

-- One claimed batch: the lease and the fence of every job in it. Position p (1-based) of the
-- arrays is the p-th job; bit p-1 of settled says its end was accepted, of dropped that it was
-- cancelled while running. errors and error_ats hold each job's last error and its time, as its
-- ready row had them (NULL when no job of the batch had failed), for the view, the running list
-- and a cancel. Ends never read these arrays (a claim of hundreds of jobs is stored compressed,
-- and each element read unpacks it again): the claim returns each job's due time, expiries and
-- last error to the runtime, and its end sends them back. A row whose every position is settled or dropped is deleted. Only the
-- primary key is indexed and half of each page is left free, so the updates of ends and renewals
-- stay HOT.
CREATE TABLE workrow_claim (
    token            bigint        PRIMARY KEY,
    queue            text          NOT NULL,
    worker           text          NOT NULL,
    lease_expires_at timestamptz   NOT NULL,
    started_at       timestamptz   NOT NULL,
    ids              bigint[]      NOT NULL,
    attempts         integer[]     NOT NULL,
    expiries         integer[]     NOT NULL,
    run_ats          timestamptz[] NOT NULL,
    errors           text[],
    error_ats        timestamptz[],
    settled          bit varying   NOT NULL,
    dropped          bit varying   NOT NULL,
    has_keys         boolean       NOT NULL DEFAULT false,
    has_steps        boolean       NOT NULL DEFAULT false,
    CONSTRAINT workrow_claim_positions CHECK (
        cardinality(ids) = cardinality(attempts) AND cardinality(ids) = cardinality(expiries)
        AND cardinality(ids) = cardinality(run_ats)
        AND cardinality(ids) = length(settled) AND cardinality(ids) = length(dropped))
) WITH (fillfactor = 50);

-- A dead job, the case file an operator retries or cancels. finished_at is also the cutoff of the
-- batched retry and cancel: a job retried and dead again has a new row with a later finished_at.
CREATE TABLE workrow_dead (
    id            bigint      PRIMARY KEY,
    queue         text        NOT NULL,
    attempts      integer     NOT NULL,
    max_attempts  integer     NOT NULL,
    expiries      integer     NOT NULL DEFAULT 0,
    last_error    text,
    last_error_at timestamptz,
    claimed_by    text,
    started_at    timestamptz,
    finished_at   timestamptz NOT NULL
);

CREATE INDEX workrow_dead_queue_idx ON workrow_dead (queue, finished_at);
-- Retention and the deaths per minute read dead jobs by time across queues.
CREATE INDEX workrow_dead_finished_idx ON workrow_dead (finished_at);
CREATE INDEX workrow_dead_kind_idx ON workrow_dead (queue, (
    CASE WHEN last_error IS NULL THEN ''
         WHEN last_error LIKE 'lease expired %' THEN 'lease expired'
         ELSE split_part(last_error, ':', 1) END), finished_at DESC, id DESC);

-- Every attempt that ended, appended and never updated, one partition per day of finished_at
-- (UTC). Retention drops whole days. status 'failed' and 'expired' are attempts the job survived;
-- 'completed' and 'cancelled' are where a finished job lives; 'dead' also has a workrow_dead row;
-- 'released' is an attempt handed back at shutdown. error is the error the attempt ended with;
-- on a completed or cancelled row, which ended with none, it is the job's last error before (an
-- earlier attempt's), and error_at its time (on other rows error_at is NULL: their finished_at is
-- the error's time). expiries (the job's lease expiries so far), run_at (when the attempt fell
-- due) and, for a finished job, the step it saved last are kept so that a finished job reads from
-- its one row as it did in the old table, its start lag included.
CREATE TABLE workrow_outcome (
    job_id      bigint      NOT NULL,
    attempt     integer     NOT NULL,
    expiries    integer     NOT NULL DEFAULT 0,
    claim_token bigint,
    queue       text        NOT NULL,
    status      text        NOT NULL
                CHECK (status IN ('completed', 'failed', 'dead', 'expired', 'released', 'cancelled')),
    worker      text,
    run_at      timestamptz,
    started_at  timestamptz,
    finished_at timestamptz NOT NULL,
    error       text,
    error_at    timestamptz,
    step        text
) PARTITION BY RANGE (finished_at);

-- Rows land here only when maintenance has not created their day: workrow_add_outcome_day moves
-- them out when it does, so it must stay near empty.
CREATE TABLE workrow_outcome_default PARTITION OF workrow_outcome DEFAULT;

-- One BRIN index over the three columns the log is searched by (a time range, a job's attempts, a
-- claim's ends), not one per column: each index a row enters costs the append about as much as
-- the row itself (docs/performance.md), and one BRIN holds all three summaries per block range.
-- Ids and tokens grow with time, so each column's ranges stay narrow.
CREATE INDEX workrow_outcome_brin ON workrow_outcome USING brin (finished_at, job_id, claim_token);

-- Creates the partition of one day of outcomes, moving that day's rows out of the default
-- partition first (PostgreSQL refuses a partition whose rows sit in the default). Returns false
-- when the day has its partition already.
CREATE FUNCTION workrow_add_outcome_day(day date) RETURNS boolean
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT AS
$$
DECLARE
    name text := 'workrow_outcome_' || to_char(day, 'YYYYMMDD');
    low  timestamptz := day::timestamp AT TIME ZONE 'UTC';
    high timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE workrow_outcome INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
    EXECUTE format('WITH moved AS (DELETE FROM workrow_outcome_default'
                   ' WHERE finished_at >= $1 AND finished_at < $2 RETURNING *)'
                   ' INSERT INTO %I SELECT * FROM moved', name) USING low, high;
    EXECUTE format('ALTER TABLE workrow_outcome ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   name, low, high);
    RETURN true;
END;
$$;

-- Retention's two steps for one expired day of outcomes, each in a transaction of its own, so the
-- parent's lock is held only for the detach and the files are unlinked after it is released. Only
-- a day partition of the log is accepted by name: these run as their owner (below).
CREATE FUNCTION workrow_detach_outcome_day(name text) RETURNS void
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT AS
$$
BEGIN
    IF name !~ '^workrow_outcome_[0-9]{8}$' THEN
        RAISE EXCEPTION 'not a day of the outcome log: %', name;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_inherits
               WHERE inhparent = 'workrow_outcome'::regclass AND inhrelid = to_regclass(name)) THEN
        EXECUTE format('ALTER TABLE workrow_outcome DETACH PARTITION %I', name);
    END IF;
END;
$$;

CREATE FUNCTION workrow_drop_outcome_day(name text) RETURNS void
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT AS
$$
BEGIN
    IF name !~ '^workrow_outcome_[0-9]{8}$' THEN
        RAISE EXCEPTION 'not a day of the outcome log: %', name;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(name)) THEN
        RAISE EXCEPTION 'day % of the outcome log is still attached', name;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS %I', name);
END;
$$;

-- An idempotency key and the job it belongs to: one job per key and queue.
CREATE TABLE workrow_job_key (
    queue           text   NOT NULL,
    idempotency_key text   NOT NULL,
    job_id          bigint NOT NULL,
    PRIMARY KEY (queue, idempotency_key)
);

-- The key an ordered queue is running: one running job per key, whatever the claims' snapshots
-- saw. Deleted by every statement that closes the job's position.
CREATE TABLE workrow_key_running (
    queue       text   NOT NULL,
    ordered_key text   NOT NULL,
    claim_token bigint NOT NULL,
    job_id      bigint NOT NULL,
    PRIMARY KEY (queue, ordered_key)
);

-- The statements that close a position delete its key by claim token.
CREATE INDEX workrow_key_running_claim_idx ON workrow_key_running (claim_token);

-- The step a multi-step job reached, so a retry resumes from it.
CREATE TABLE workrow_step (
    job_id bigint PRIMARY KEY,
    step   text   NOT NULL
);

-- 2. Every job of the old table to its home.

INSERT INTO workrow_ready (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                           partition_bucket, fairness_key, last_error, last_error_at, claimed_by)
SELECT id, queue, priority, run_at, attempts, max_attempts, lease_expiries, partition_key,
       partition_bucket, fairness_key, last_error, last_error_at, claimed_by
FROM workrow_job WHERE status = 'pending';

INSERT INTO workrow_scheduled (id, queue, priority, run_at, attempts, max_attempts, expiries, partition_key,
                               partition_bucket, fairness_key, last_error, last_error_at, claimed_by)
SELECT id, queue, priority, run_at, attempts, max_attempts, lease_expiries, partition_key,
       partition_bucket, fairness_key, last_error, last_error_at, claimed_by
FROM workrow_job WHERE status = 'scheduled';

-- A running job becomes a claim of its own under its lease token and expiry: the node that ran
-- it is stopped, so the sweeper recovers it when that lease runs out, as it would have before.
INSERT INTO workrow_claim (token, queue, worker, lease_expires_at, started_at, ids, attempts, expiries,
                           run_ats, errors, error_ats, settled, dropped, has_keys, has_steps)
SELECT lease_token, queue, claimed_by, lease_expires_at, coalesce(started_at, updated_at),
       ARRAY[id], ARRAY[attempts], ARRAY[lease_expiries], ARRAY[run_at],
       CASE WHEN last_error IS NOT NULL THEN ARRAY[last_error] END,
       CASE WHEN last_error IS NOT NULL THEN ARRAY[last_error_at] END, B'0', B'0',
       ordered_key IS NOT NULL, step IS NOT NULL
FROM workrow_job WHERE status = 'running';

INSERT INTO workrow_key_running (queue, ordered_key, claim_token, job_id)
SELECT queue, ordered_key, lease_token, id
FROM workrow_job WHERE status = 'running' AND ordered_key IS NOT NULL;

INSERT INTO workrow_dead (id, queue, attempts, max_attempts, expiries, last_error, last_error_at,
                          claimed_by, started_at, finished_at)
SELECT id, queue, attempts, max_attempts, lease_expiries, last_error, last_error_at,
       claimed_by, started_at, coalesce(finished_at, updated_at)
FROM workrow_job WHERE status = 'dead';

-- The outcomes the old table implies: a finished job's end (its last error kept as the outcome's
-- error), and the last failure of a job not finished yet, which the log now holds (a running job's
-- last_error is read from it). History older than 60 days goes into one partition, named for its
-- last day so that retention drops it like a day, rather than one partition per old day.
CREATE TEMPORARY TABLE workrow_upgrade_outcome ON COMMIT DROP AS
SELECT id AS job_id, attempts AS attempt, lease_expiries AS expiries, queue, status, claimed_by AS worker,
       run_at, started_at, coalesce(finished_at, updated_at) AS finished_at, last_error AS error,
       last_error_at AS error_at, step
FROM workrow_job WHERE status IN ('completed', 'cancelled')
UNION ALL
SELECT id, CASE WHEN status = 'running' THEN greatest(attempts - 1, 0) ELSE attempts END, lease_expiries, queue,
       'failed', claimed_by, NULL, NULL, coalesce(last_error_at, updated_at), last_error, NULL, NULL
FROM workrow_job WHERE status IN ('scheduled', 'pending', 'running') AND last_error IS NOT NULL;

DO $$
DECLARE
    kept_from date := (now() AT TIME ZONE 'UTC')::date - 60;
BEGIN
    IF EXISTS (SELECT 1 FROM workrow_upgrade_outcome WHERE finished_at < kept_from::timestamp AT TIME ZONE 'UTC') THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF workrow_outcome FOR VALUES FROM (MINVALUE) TO (%L)',
                       'workrow_outcome_' || to_char(kept_from - 1, 'YYYYMMDD'),
                       kept_from::timestamp AT TIME ZONE 'UTC');
    END IF;
END;
$$;

SELECT workrow_add_outcome_day(day)
FROM (SELECT DISTINCT (finished_at AT TIME ZONE 'UTC')::date AS day
      FROM workrow_upgrade_outcome
      WHERE finished_at >= ((now() AT TIME ZONE 'UTC')::date - 60)::timestamp AT TIME ZONE 'UTC'
      UNION
      SELECT (now() AT TIME ZONE 'UTC')::date + ahead FROM generate_series(0, 7) AS ahead) AS days;

INSERT INTO workrow_outcome (job_id, attempt, expiries, claim_token, queue, status, worker, run_at, started_at,
                             finished_at, error, error_at, step)
SELECT job_id, attempt, expiries, NULL, queue, status, worker, run_at, started_at, finished_at, error, error_at, step
FROM workrow_upgrade_outcome;

-- A dead job keeps its step too: an operator's retry resumes from it, as before.
INSERT INTO workrow_step (job_id, step)
SELECT id, step FROM workrow_job WHERE step IS NOT NULL AND status IN ('scheduled', 'pending', 'running', 'dead');

INSERT INTO workrow_job_key (queue, idempotency_key, job_id)
SELECT queue, idempotency_key, id FROM workrow_job WHERE idempotency_key IS NOT NULL;

-- 3. The old table becomes the first partition of the job data: its state columns go (a catalogue
-- change, no rewrite), and with them every index and check that named them.

DROP VIEW workrow_queue_stats;
DROP TRIGGER workrow_job_inserted ON workrow_job;
DROP INDEX workrow_job_idempotency_idx;
ALTER TABLE workrow_job
    DROP COLUMN status, DROP COLUMN run_at, DROP COLUMN attempts, DROP COLUMN last_error,
    DROP COLUMN last_error_at, DROP COLUMN step, DROP COLUMN claimed_by, DROP COLUMN lease_expires_at,
    DROP COLUMN lease_token, DROP COLUMN started_at, DROP COLUMN finished_at, DROP COLUMN updated_at,
    DROP COLUMN lease_expiries, DROP COLUMN ordered_key;

CREATE TABLE workrow_job_data (
    id               bigint      NOT NULL,
    queue            text        NOT NULL,
    partition_key    text,
    partition_bucket smallint    NOT NULL,
    priority         smallint    NOT NULL DEFAULT 0,
    idempotency_key  text,
    payload          jsonb       NOT NULL,
    headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    max_attempts     integer     NOT NULL,
    fairness_key     text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- named as the old table's checks, which a partition must carry by name
    CONSTRAINT workrow_job_partition_bucket_check CHECK (partition_bucket BETWEEN 0 AND 1023),
    CONSTRAINT workrow_job_max_attempts_check CHECK (max_attempts >= 1),
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);

CREATE TABLE workrow_job_data_default PARTITION OF workrow_job_data DEFAULT;

DO $$
DECLARE
    next_id bigint;
BEGIN
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END INTO next_id FROM workrow_job_id_seq;
    SELECT greatest(next_id, coalesce(max(id) + 1, 1)) INTO next_id FROM workrow_job;
    -- the identity's sequence goes with the identity; ids continue from a sequence of the same name
    ALTER TABLE workrow_job ALTER COLUMN id DROP IDENTITY;
    EXECUTE format('CREATE SEQUENCE workrow_job_id_seq START %s', next_id);
    ALTER TABLE workrow_job RENAME TO workrow_job_data_initial;
    ALTER INDEX workrow_job_pkey RENAME TO workrow_job_data_initial_pkey;
    -- the attach reads the old rows once to check their ids fall in the range
    EXECUTE format('ALTER TABLE workrow_job_data ATTACH PARTITION workrow_job_data_initial'
                   ' FOR VALUES FROM (MINVALUE) TO (%s)', next_id);
    EXECUTE format('CREATE TABLE %I PARTITION OF workrow_job_data FOR VALUES FROM (%s) TO (%s)',
                   'workrow_job_data_' || next_id, next_id, next_id + 1000000);
END;
$$;

ALTER TABLE workrow_job_data ALTER COLUMN id SET DEFAULT nextval('workrow_job_id_seq');
ALTER SEQUENCE workrow_job_id_seq OWNED BY workrow_job_data.id;

-- Keeps a range partition of workrow_job_data ahead of the ids: when less than half of the
-- newest range is left unused, creates the next one, as large as that range (at least min_size
-- ids), moving into it first any job that already landed in the default partition. Returns the
-- partition created, or NULL when none was needed. Maintenance calls it; jobs never wait on it
-- (the default partition takes ids beyond every range meanwhile).
CREATE FUNCTION workrow_extend_job_data(min_size bigint) RETURNS text
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT AS
$$
DECLARE
    low    bigint;
    high   bigint;
    used   bigint;
    size   bigint;
    name   text;
BEGIN
    SELECT bounds[1]::bigint, bounds[2]::bigint INTO low, high
    FROM (SELECT regexp_match(pg_get_expr(child.relpartbound, child.oid), 'FROM \(''(-?\d+)''\) TO \(''(-?\d+)''\)')
                 AS bounds
          FROM pg_inherits
          JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid
          WHERE pg_inherits.inhparent = 'workrow_job_data'::regclass) AS ranges
    WHERE bounds IS NOT NULL
    ORDER BY bounds[2]::bigint DESC
    LIMIT 1;
    SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END INTO used FROM workrow_job_id_seq;
    IF high IS NOT NULL AND high - used > (high - low) / 2 THEN
        RETURN NULL;
    END IF;
    size := greatest(coalesce(high - low, 0), min_size);
    low := coalesce(high, used + 1);
    name := 'workrow_job_data_' || low;
    EXECUTE format('CREATE TABLE %I (LIKE workrow_job_data INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
    EXECUTE format('WITH moved AS (DELETE FROM workrow_job_data_default WHERE id >= $1 AND id < $2 RETURNING *)'
                   ' INSERT INTO %I SELECT * FROM moved', name) USING low, low + size;
    EXECUTE format('ALTER TABLE workrow_job_data ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
                   name, low, low + size);
    RETURN name;
END;
$$;

-- Retires the job data of jobs finished before cutoff, whole id ranges at a time: a range
-- partition whose newest job was created before cutoff is detached and dropped, its stragglers
-- (jobs still waiting, running at an open position of a claim, or dead, or with an outcome on or
-- after cutoff) first copied into
-- the default partition, the dropped jobs' idempotency keys deleted. The default partition's own
-- stragglers that have since finished before cutoff are deleted row by row (they are few). Columns
-- are named: the first range is the old table, whose columns are in another order. The
-- newest range, and any range whose ids are not all drawn yet, is never retired: ids still land
-- in it. Locks workrow_job_data before it looks for a range's stragglers, so an enqueue into an
-- old range by a transaction that commits late is waited for and kept, not dropped; a pass with
-- no range to retire takes no lock. Returns the partitions dropped.
CREATE FUNCTION workrow_retire_job_data(cutoff timestamptz) RETURNS SETOF text
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
                                          payload, headers, max_attempts, fairness_key, created_at)
            SELECT id, queue, partition_key, partition_bucket, priority, idempotency_key, payload, headers,
                   max_attempts, fairness_key, created_at
            FROM %I AS data
            WHERE data.id IN (SELECT id FROM workrow_ready WHERE id >= $1 AND id < $2
                              UNION SELECT id FROM workrow_scheduled WHERE id >= $1 AND id < $2
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

-- 4. Indexes of the homes, built after the moves.

-- The claims' indexes, as the old table's pending-only ones (docs/storage-layout.md, "Indexes").
CREATE INDEX workrow_ready_unkeyed_claim_idx ON workrow_ready (queue, priority, run_at, id)
    WHERE partition_key IS NULL AND fairness_key = '';
CREATE INDEX workrow_ready_keyed_claim_idx ON workrow_ready (queue, priority, run_at, id)
    WHERE partition_key IS NOT NULL OR fairness_key <> '';
CREATE INDEX workrow_ready_keyless_claim_idx ON workrow_ready (queue, priority, run_at, id)
    WHERE partition_key IS NULL AND fairness_key <> '';
CREATE INDEX workrow_ready_fair_claim_idx ON workrow_ready (queue, fairness_key, priority, run_at, id)
    WHERE partition_key IS NOT NULL OR fairness_key <> '';
CREATE INDEX workrow_ready_key_pending_idx ON workrow_ready (queue, partition_key, id)
    WHERE partition_key IS NOT NULL;
CREATE INDEX workrow_ready_id_idx ON workrow_ready USING brin (id);
CREATE INDEX workrow_ready_exhausted_idx ON workrow_ready (id) WHERE attempts >= max_attempts;

CREATE INDEX workrow_scheduled_run_at_idx ON workrow_scheduled (run_at);
CREATE INDEX workrow_scheduled_queue_idx ON workrow_scheduled (queue);
CREATE INDEX workrow_scheduled_id_idx ON workrow_scheduled USING brin (id);
CREATE INDEX workrow_scheduled_key_held_idx ON workrow_scheduled (queue, partition_key, id)
    WHERE partition_key IS NOT NULL;
CREATE INDEX workrow_scheduled_exhausted_idx ON workrow_scheduled (id) WHERE attempts >= max_attempts;

ALTER TABLE workrow_ready SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE workrow_claim SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- Idle workers wake on a job becoming due: enqueues, promotions, retries and released jobs all
-- insert here. Same function and transition-table name as before.
CREATE TRIGGER workrow_ready_inserted
    AFTER INSERT ON workrow_ready
    REFERENCING NEW TABLE AS inserted_jobs
    FOR EACH STATEMENT
    EXECUTE FUNCTION workrow_notify_job_inserted();

-- 5. What people query: one row per job, its status the home its live row is in.

CREATE VIEW workrow_job AS
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'scheduled'::text AS status, state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL::timestamptz AS lease_expires_at, NULL::bigint AS lease_token, data.created_at,
       NULL::timestamptz AS started_at, NULL::timestamptz AS finished_at, state.expiries AS lease_expiries,
       data.fairness_key
FROM workrow_scheduled AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'pending', state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, NULL, NULL, state.expiries, data.fairness_key
FROM workrow_ready AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, claim.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'running', held.run_at, held.attempts,
       data.max_attempts, held.last_error, held.last_error_at, step.step, claim.worker,
       claim.lease_expires_at, claim.token, data.created_at, claim.started_at, NULL, held.expiries,
       data.fairness_key
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
       NULL, NULL, data.created_at, state.started_at, state.finished_at, state.expiries, data.fairness_key
FROM workrow_dead AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, outcome.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, outcome.status, outcome.run_at, outcome.attempt,
       data.max_attempts, outcome.error, outcome.error_at, outcome.step,
       outcome.worker, NULL, NULL, data.created_at, outcome.started_at, outcome.finished_at, outcome.expiries,
       data.fairness_key
FROM workrow_outcome AS outcome
JOIN workrow_job_data AS data ON data.id = outcome.job_id
WHERE outcome.status IN ('completed', 'cancelled');

-- DELETE on the view deletes each job from every home it has rows in, its history included, so
-- runbooks and test suites that delete from the old table keep working. A running job's position
-- is dropped, as a cancel drops it: its holder's end is refused and its handler interrupted at the
-- next renewal. The job is looked for afresh by each statement, not where the view's snapshot saw
-- it: its open position is dropped first (locking its claim row, so an end of it either committed
-- before, and its new home is deleted below, or is refused after), then its waiting and dead rows
-- go, then a claim that took it meanwhile is dropped too. One job at a time (a view's triggers are
-- per row): retention, not this, is how history goes in bulk.
CREATE FUNCTION workrow_job_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
BEGIN
    FOR pass IN 1..2 LOOP
        UPDATE workrow_claim
        SET dropped = set_bit(dropped, array_position(ids, OLD.id) - 1, 1)
        WHERE ids @> ARRAY[OLD.id]
          AND get_bit(settled, array_position(ids, OLD.id) - 1) = 0
          AND get_bit(dropped, array_position(ids, OLD.id) - 1) = 0;
        EXIT WHEN pass = 2;
        DELETE FROM workrow_ready WHERE id = OLD.id;
        DELETE FROM workrow_scheduled WHERE id = OLD.id;
        DELETE FROM workrow_dead WHERE id = OLD.id;
    END LOOP;
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

CREATE TRIGGER workrow_job_delete INSTEAD OF DELETE ON workrow_job
    FOR EACH ROW EXECUTE FUNCTION workrow_job_delete();

-- Counts per queue from the homes, never through the view (a count over the view joins every
-- job's data). The columns and their meaning are the old view's.
CREATE VIEW workrow_queue_stats AS
WITH homes AS (
    SELECT queue, 'pending' AS status, count(*) AS jobs,
           count(*) FILTER (WHERE run_at <= now()) AS due,
           min(run_at) FILTER (WHERE run_at <= now()) AS oldest_due, max(attempts) AS attempts
    FROM workrow_ready GROUP BY queue
    UNION ALL
    SELECT queue, 'scheduled', count(*), 0, NULL, max(attempts) FROM workrow_scheduled GROUP BY queue
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
       coalesce(sum(jobs) FILTER (WHERE status = 'scheduled'), 0)::bigint AS scheduled
FROM homes
GROUP BY homes.queue;

-- 6. Rights. The partition functions create, attach, detach and drop tables, which only the
-- tables' owner may; they run as their owner (SECURITY DEFINER, with the search path fixed at
-- creation), so an application that connects with row rights only keeps its history in days. Only
-- the owner may call them until it grants EXECUTE (docs/operations.md, "Least privilege").
REVOKE EXECUTE ON FUNCTION workrow_add_outcome_day(date), workrow_detach_outcome_day(text),
    workrow_drop_outcome_day(text), workrow_extend_job_data(bigint), workrow_retire_job_data(timestamptz)
    FROM PUBLIC;

-- Their search path is this schema, then pg_temp, and nothing else. Unless pg_temp is named,
-- PostgreSQL searches a session's temporary tables first, so a caller could shadow a table these
-- functions write as their owner (workrow_outcome_default, workrow_ready, ...) with a temporary
-- table of its own, and a trigger on it would run as the owner.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOREACH f IN ARRAY ARRAY['workrow_add_outcome_day(date)', 'workrow_detach_outcome_day(text)',
                             'workrow_drop_outcome_day(text)', 'workrow_extend_job_data(bigint)',
                             'workrow_retire_job_data(timestamptz)']::regprocedure[]
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END;
$$;

-- Policies, first part: enqueue from SQL (workrow_enqueue), a job's deadline and its own handler
-- timeout (JobRequest.expiresAt / timeout), snoozes (SnoozeJobException), the holds a snooze can
-- put on its whole queue or partition key, and cluster-wide concurrency caps. Old and new nodes
-- may run together across this migration: every change adds a column, a function or a value.
SELECT set_config('search_path', quote_ident(current_schema()), true);

-- The attempts a queue's jobs get when the enqueue names none, as the runtimes working the queue
-- declare it at start (NULL: declared by a node of an older version). workrow_enqueue reads it.
ALTER TABLE workrow_queue_rule ADD COLUMN max_attempts integer CHECK (max_attempts >= 1);

-- Written once with the job, NULL for none (no cost: the rows carry a null bitmap already).
-- expires_at: no attempt starts at or after it; the claim returns it and the runtime cancels the
-- job unstarted instead ('expired: ...'). timeout_ms: the job's own handler timeout, in place of
-- its queue's.
ALTER TABLE workrow_job_data ADD COLUMN expires_at timestamptz, ADD COLUMN timeout_ms bigint;

-- How often a job snoozed (SnoozeJobException), each snooze's attempt given back, so that
-- max-snoozes can bound them: NULL for none (no cost), carried through every move that keeps the
-- attempts (the ends, the sweeper, the promotion); per position on a claim row, NULL when no job
-- of the claim snoozed.
ALTER TABLE workrow_ready ADD COLUMN snoozes integer;
ALTER TABLE workrow_scheduled ADD COLUMN snoozes integer;
ALTER TABLE workrow_claim ADD COLUMN snoozes integer[];

-- A snooze is an attempt the handler handed back with a delay: it is logged as such. The check is
-- replaced without a scan of the log (NOT VALID: the old rows hold older values only). Day
-- partitions made LIKE the log keep copies of their own when the parent's goes, which go next.
ALTER TABLE workrow_outcome DROP CONSTRAINT IF EXISTS workrow_outcome_status_check;
DO $$
DECLARE
    day regclass;
BEGIN
    FOR day IN SELECT constraint_of.conrelid::regclass
               FROM pg_constraint AS constraint_of
               JOIN pg_inherits ON pg_inherits.inhrelid = constraint_of.conrelid
               WHERE pg_inherits.inhparent = 'workrow_outcome'::regclass
                 AND constraint_of.conname = 'workrow_outcome_status_check'
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT workrow_outcome_status_check', day);
    END LOOP;
END;
$$;
ALTER TABLE workrow_outcome ADD CONSTRAINT workrow_outcome_status_check
    CHECK (status IN ('completed', 'failed', 'dead', 'expired', 'released', 'cancelled', 'snoozed')) NOT VALID;

-- Holds: a queue, or one partition key of it, held cluster-wide until a time, by a handler's
-- SnoozeJobException(...).wholeQueue() / wholeKey() (a partner's 429 with Retry-After) or by an
-- operator. Claims on every node skip what a live hold covers (until > now()); an expired row is
-- ignored, and deleted by the next hold set. scope 'queue' (held_key '') or 'key'.
CREATE TABLE workrow_hold (
    queue    text        NOT NULL,
    scope    text        NOT NULL CHECK (scope IN ('queue', 'key')),
    held_key text        NOT NULL DEFAULT '',
    until    timestamptz NOT NULL,
    reason   text,
    held_by  text,
    held_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, scope, held_key)
);

-- A queue's cluster-wide concurrency cap (workrow.queues.<q>.global-concurrency): at most that many
-- of its jobs claimed at once across every node. configured is what the runtimes working the queue
-- declare at start (the last to start wins); set_by_hand, set at run time (QueueAdmin), wins over
-- it until cleared. A capped claim locks the queue's row, so the claims of one capped queue take
-- turns, and counts the queue's open positions in a snapshot taken after the lock: ends and the
-- sweeper only ever lower that count, so the room it finds holds until the claim commits.
CREATE TABLE workrow_queue_cap (
    queue       text        PRIMARY KEY,
    configured  integer     CHECK (configured >= 1),
    set_by_hand integer     CHECK (set_by_hand >= 1),
    declared_by text,
    reason      text,
    changed_at  timestamptz NOT NULL DEFAULT now()
);

-- The bucket of a partition key: CRC-32 of its UTF-8 bytes, modulo 1,024, as PartitionBuckets
-- computes it in Java, so a job enqueued from SQL lands in the bucket the Java producer would pick.
CREATE FUNCTION workrow_partition_bucket(partition_key text) RETURNS smallint
    LANGUAGE plpgsql
    IMMUTABLE STRICT PARALLEL SAFE AS
$$
DECLARE
    bytes bytea := convert_to(partition_key, 'UTF8');
    crc   bigint := 4294967295;
BEGIN
    FOR i IN 0 .. length(bytes) - 1 LOOP
        crc := crc # get_byte(bytes, i);
        FOR round IN 1 .. 8 LOOP
            crc := (crc >> 1) # (3988292384 * (crc & 1));
        END LOOP;
    END LOOP;
    RETURN ((crc # 4294967295) % 1024)::smallint;
END;
$$;

-- Enqueues one job from SQL in the caller's transaction, with JobQueue's rules: the queue name's
-- rule, a payload required, one job per (queue, idempotency key) (the key's job id is returned
-- when it exists), the queue's declared attempts, ready when due (waking idle workers at commit)
-- and scheduled when later. priority is an integer, range-checked, so that a literal or a driver's
-- int binds without a cast. It runs with the caller's rights.
CREATE FUNCTION workrow_enqueue(queue text, payload jsonb, run_at timestamptz DEFAULT now(),
                                idempotency_key text DEFAULT NULL, priority integer DEFAULT 0,
                                partition_key text DEFAULT NULL) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
DECLARE
    new_id   bigint;
    attempts integer;
    due      timestamptz := coalesce(workrow_enqueue.run_at, now());
    bucket   smallint;
BEGIN
    IF workrow_enqueue.queue IS NULL OR workrow_enqueue.queue !~ '^[a-z][a-z0-9_-]{0,63}$' THEN
        RAISE EXCEPTION 'Queue name ''%'' is invalid: use lowercase letters, digits, ''-'' and ''_'', starting'
                        ' with a letter, at most 64 characters', workrow_enqueue.queue
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF workrow_enqueue.payload IS NULL THEN
        RAISE EXCEPTION 'payload must not be null (a job with no data takes ''{}'')'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF workrow_enqueue.priority IS NULL OR workrow_enqueue.priority NOT BETWEEN -32768 AND 32767 THEN
        RAISE EXCEPTION 'priority must be between -32768 and 32767, was %', workrow_enqueue.priority
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    new_id := nextval('workrow_job_id_seq');
    IF workrow_enqueue.idempotency_key IS NOT NULL THEN
        -- A concurrent enqueue of the same key waits here for the other transaction's end.
        INSERT INTO workrow_job_key (queue, idempotency_key, job_id)
        VALUES (workrow_enqueue.queue, workrow_enqueue.idempotency_key, new_id)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN (SELECT key.job_id FROM workrow_job_key AS key
                    WHERE key.queue = workrow_enqueue.queue AND key.idempotency_key = workrow_enqueue.idempotency_key);
        END IF;
    END IF;
    SELECT rule.max_attempts INTO attempts FROM workrow_queue_rule AS rule WHERE rule.queue = workrow_enqueue.queue;
    attempts := coalesce(attempts, 5);
    bucket := coalesce(workrow_partition_bucket(workrow_enqueue.partition_key), floor(random() * 1024)::smallint);
    INSERT INTO workrow_job_data (id, queue, partition_key, partition_bucket, priority, idempotency_key, payload,
                                  max_attempts, fairness_key)
    VALUES (new_id, workrow_enqueue.queue, workrow_enqueue.partition_key, bucket, workrow_enqueue.priority,
            workrow_enqueue.idempotency_key, workrow_enqueue.payload, attempts,
            coalesce(workrow_enqueue.partition_key, ''));
    IF due <= clock_timestamp() THEN
        -- Due from no later than the statement's start, the time the ready row's trigger wakes by.
        INSERT INTO workrow_ready (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                   fairness_key)
        VALUES (new_id, workrow_enqueue.queue, workrow_enqueue.priority, least(due, statement_timestamp()), attempts,
                workrow_enqueue.partition_key, bucket, coalesce(workrow_enqueue.partition_key, ''));
    ELSE
        INSERT INTO workrow_scheduled (id, queue, priority, run_at, max_attempts, partition_key, partition_bucket,
                                       fairness_key)
        VALUES (new_id, workrow_enqueue.queue, workrow_enqueue.priority, due, attempts,
                workrow_enqueue.partition_key, bucket, coalesce(workrow_enqueue.partition_key, ''));
    END IF;
    RETURN new_id;
END;
$$;

-- Retirement copies a detached range's live jobs back into the job data: by every column the
-- parent has, looked up when it runs, so a column added later is never left behind.
CREATE OR REPLACE FUNCTION workrow_retire_job_data(cutoff timestamptz) RETURNS SETOF text
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT AS
$$
DECLARE
    range        record;
    last_created timestamptz;
    candidates   text[] := '{}';
    columns      text;
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
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO columns
    FROM pg_attribute
    WHERE attrelid = 'workrow_job_data'::regclass AND attnum > 0 AND NOT attisdropped;
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
            INSERT INTO workrow_job_data (%s)
            SELECT %s
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
            $straggle$, columns, columns, range.name) USING range.low, range.high, cutoff;
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

-- Idle workers wake on rows due by the time the trigger runs (clock_timestamp()), not by the
-- statement's start: a retry with no backoff, or a release, is due from its end's own clock, later
-- than its statement began, and was missed by the statement's time.
CREATE OR REPLACE FUNCTION workrow_notify_job_inserted() RETURNS trigger
    LANGUAGE plpgsql AS
$$
BEGIN
    PERFORM pg_notify('workrow:' || TG_TABLE_SCHEMA, due.queue)
    FROM (SELECT DISTINCT queue FROM inserted_jobs WHERE run_at <= clock_timestamp()) AS due;
    RETURN NULL;
END;
$$;

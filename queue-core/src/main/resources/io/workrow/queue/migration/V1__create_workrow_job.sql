-- Workrow's job table: one row per job, every fact about it a column you can query.
-- Runs through Workrow's own Flyway instance with search_path set to the configured schema,
-- so no name here is schema-qualified. docs/state-machine.md draws the lifecycle.

-- Fencing tokens: every claim takes a new value, so a worker that lost its lease can never
-- match the row again, even if the same worker claims the job a second time.
CREATE SEQUENCE workrow_lease_token_seq;

CREATE TABLE workrow_job (
    -- identity and routing
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue            text        NOT NULL,
    partition_key    text,
    partition_bucket smallint    NOT NULL CHECK (partition_bucket BETWEEN 0 AND 1023),
    priority         smallint    NOT NULL DEFAULT 0,
    idempotency_key  text,

    -- the work
    payload          jsonb       NOT NULL,
    headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,

    -- lifecycle
    status           text        NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'running', 'completed', 'dead', 'cancelled')),
    run_at           timestamptz NOT NULL DEFAULT now(),
    attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts     integer     NOT NULL CHECK (max_attempts >= 1),
    last_error       text,
    last_error_at    timestamptz,
    step             text,

    -- ownership: set while running; claimed_by keeps the last worker on finished rows
    claimed_by       text,
    lease_expires_at timestamptz,
    lease_token      bigint,

    -- time
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT workrow_job_running_holds_lease CHECK (
        status <> 'running'
        OR (claimed_by IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL)),
    -- A token exists exactly while the job runs, so "lease_token = ?" alone is the fence
    -- (see JobSql: finalizing statements do not repeat status = 'running').
    CONSTRAINT workrow_job_token_only_while_running CHECK ((status = 'running') = (lease_token IS NOT NULL))
);

-- Claim (JobSql.JOB_CLAIM): only pending rows are indexed, in the exact claim order, so the
-- index stays as small as the backlog no matter how many finished rows the table keeps.
CREATE INDEX workrow_job_claim_idx
    ON workrow_job (queue, priority, run_at, id)
    WHERE status = 'pending';

-- Stale lease sweep (JobSql.JOB_SWEEP_EXPIRED_LEASES): running rows only, by expiry.
CREATE INDEX workrow_job_lease_idx
    ON workrow_job (lease_expires_at)
    WHERE status = 'running';

-- Idempotent enqueue (JobSql.JOB_INSERT_MANY ... ON CONFLICT): one job per key and queue.
CREATE UNIQUE INDEX workrow_job_idempotency_idx
    ON workrow_job (queue, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Retention pruning (JobSql.JOB_PRUNE_FINISHED): finished rows by age.
CREATE INDEX workrow_job_finished_idx
    ON workrow_job (finished_at)
    WHERE status IN ('completed', 'dead', 'cancelled');

-- A queue table is rewritten constantly; vacuum it after 2% churn rather than the default 20%,
-- so dead tuples do not pile up in front of the claim index.
ALTER TABLE workrow_job SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- Wake-up hint for idle workers: one NOTIFY per queue per inserting statement (a statement-level
-- trigger, so a 1,000-row enqueueAll sends one notification, not 1,000). The payload is only the
-- queue name. Jobs scheduled for later are found by polling.
CREATE FUNCTION workrow_notify_job_inserted() RETURNS trigger
    LANGUAGE plpgsql AS
$$
BEGIN
    PERFORM pg_notify('workrow_job_inserted', due.queue)
    FROM (SELECT DISTINCT queue FROM inserted_jobs WHERE run_at <= now()) AS due;
    RETURN NULL;
END;
$$;

CREATE TRIGGER workrow_job_inserted
    AFTER INSERT ON workrow_job
    REFERENCING NEW TABLE AS inserted_jobs
    FOR EACH STATEMENT
    EXECUTE FUNCTION workrow_notify_job_inserted();

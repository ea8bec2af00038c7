-- Deadlines swept: a job nobody starts by its deadline (JobRequest.expiresAt) is cancelled at the
-- deadline, not only when a claim reaches it, so a paused queue, a queue no node works or a
-- backlog the claims do not reach in time shows it cancelled ('expired: ...') and its dependents
-- settled. Old and new nodes may run together across this migration: an old node's enqueues fill
-- the new table through its trigger too, and only new nodes sweep it.
SELECT set_config('search_path', quote_ident(current_schema()), true);

-- One row per job with a deadline, by deadline: the sweep reads the deadlines that passed from the
-- front of the primary key instead of scanning the jobs' data. A row is written with the job (and
-- again when replaceWaiting moves the deadline, or a dead job is retried) and goes once its time has
-- come: deleted, or put off to be looked at again while a worker holds the job (a retry, a release
-- or a lost lease may put it back to wait). A job that ends before a far deadline leaves its row
-- until then.
CREATE TABLE workrow_deadline (
    expires_at timestamptz NOT NULL,
    job_id     bigint      NOT NULL,
    PRIMARY KEY (expires_at, job_id)
);

-- Runs as its owner, so that a role allowed to enqueue needs no grant on workrow_deadline (an
-- application role keeps enqueueing with deadlines between this migration and its grants being
-- run again); it searches only Workrow's schema, then pg_temp, as the partition functions do.
CREATE FUNCTION workrow_note_deadline() RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER AS
$$
BEGIN
    INSERT INTO workrow_deadline (expires_at, job_id) VALUES (NEW.expires_at, NEW.id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION workrow_note_deadline() SET search_path = %I, pg_temp', current_schema());
END;
$$;

-- Row triggers whose WHEN is false queue nothing: a job without a deadline costs the check only.
-- On the partitioned table they are cloned to every partition, those attached later included.
CREATE TRIGGER workrow_deadline_noted AFTER INSERT ON workrow_job_data
    FOR EACH ROW WHEN (NEW.expires_at IS NOT NULL)
    EXECUTE FUNCTION workrow_note_deadline();

CREATE TRIGGER workrow_deadline_moved AFTER UPDATE OF expires_at ON workrow_job_data
    FOR EACH ROW WHEN (NEW.expires_at IS NOT NULL AND NEW.expires_at IS DISTINCT FROM OLD.expires_at)
    EXECUTE FUNCTION workrow_note_deadline();

-- The deadlines of jobs that wait now or are held by workers (enqueued since version 17), read
-- from their homes and the claims rather than from the whole of the jobs' data.
INSERT INTO workrow_deadline (expires_at, job_id)
SELECT data.expires_at, data.id
FROM (SELECT id FROM workrow_ready
      UNION SELECT id FROM workrow_scheduled
      UNION SELECT id FROM workrow_waiting
      UNION SELECT unnest(ids) FROM workrow_claim) AS live
JOIN workrow_job_data AS data ON data.id = live.id
WHERE data.expires_at IS NOT NULL
ON CONFLICT DO NOTHING;

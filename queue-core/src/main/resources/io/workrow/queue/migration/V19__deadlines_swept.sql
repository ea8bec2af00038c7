-- Deadlines swept: a job nobody starts by its deadline (JobRequest.expiresAt) is cancelled at the
-- deadline, not only when a claim reaches it, so a paused queue, a queue no node works or a
-- backlog the claims do not reach in time shows it cancelled ('expired: ...') and its dependents
-- settled. Old and new nodes may run together across this migration: an old node's enqueues fill
-- the new table through its trigger too, and only new nodes sweep it.
SELECT set_config('search_path', quote_ident(current_schema()), true);

-- One row per job with a deadline, by deadline: the sweep reads the deadlines that passed from the
-- front of the primary key instead of scanning the jobs' data. A row is written with the job (and
-- again when replaceWaiting moves the deadline) and deleted by the sweep once its time has come,
-- whatever happened to the job meanwhile: the table holds deadlines still to come, not history.
CREATE TABLE workrow_deadline (
    expires_at timestamptz NOT NULL,
    job_id     bigint      NOT NULL,
    PRIMARY KEY (expires_at, job_id)
);

CREATE FUNCTION workrow_note_deadline() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT AS
$$
BEGIN
    INSERT INTO workrow_deadline (expires_at, job_id) VALUES (NEW.expires_at, NEW.id) ON CONFLICT DO NOTHING;
    RETURN NULL;
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

-- The deadlines of jobs that wait now (enqueued since version 17), read from their homes rather
-- than from the whole of the jobs' data.
INSERT INTO workrow_deadline (expires_at, job_id)
SELECT data.expires_at, data.id
FROM (SELECT id FROM workrow_ready
      UNION ALL SELECT id FROM workrow_scheduled
      UNION ALL SELECT id FROM workrow_waiting) AS live
JOIN workrow_job_data AS data ON data.id = live.id
WHERE data.expires_at IS NOT NULL
ON CONFLICT DO NOTHING;

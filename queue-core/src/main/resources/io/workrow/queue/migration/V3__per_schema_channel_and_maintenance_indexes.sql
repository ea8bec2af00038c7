-- Wake-ups per schema: two Workrow schemas in one database no longer wake each other. The channel
-- is 'workrow:' || schema (store/NotifyChannel says the same in Java). Jobs whose run_at is this
-- statement's time or earlier are due now (JobSql.JOB_INSERT_MANY counts a delay from
-- statement_timestamp(), so a job without delay is due exactly then).
CREATE OR REPLACE FUNCTION workrow_notify_job_inserted() RETURNS trigger
    LANGUAGE plpgsql AS
$$
BEGIN
    PERFORM pg_notify('workrow:' || TG_TABLE_SCHEMA, due.queue)
    FROM (SELECT DISTINCT queue FROM inserted_jobs WHERE run_at <= statement_timestamp()) AS due;
    RETURN NULL;
END;
$$;

-- Exhausted job retirement (JobSql.JOB_RETIRE_EXHAUSTED) runs on every node every sweep: this
-- index holds only the rows it moves, so it is empty nearly always and the pass reads nothing.
CREATE INDEX workrow_job_exhausted_idx
    ON workrow_job (id)
    WHERE status = 'pending' AND attempts >= max_attempts;

-- Retention pruning (JobSql.JOB_PRUNE_FINISHED) deletes one status at a time, oldest first: with
-- the status leading, each pass reads only its own status's expired rows.
DROP INDEX workrow_job_finished_idx;
CREATE INDEX workrow_job_finished_idx
    ON workrow_job (status, finished_at)
    WHERE status IN ('completed', 'dead', 'cancelled');

-- Jobs due later wait in their own status, 'scheduled', outside the claim index: a claim then
-- reads only due rows, however many jobs are scheduled ahead of them (before, a claim walked
-- every future row of a better priority; JobSql.JOB_CLAIM). JobSql.JOB_PROMOTE_SCHEDULED moves
-- them to 'pending' when they fall due.
ALTER TABLE workrow_job DROP CONSTRAINT workrow_job_status_check;
ALTER TABLE workrow_job ADD CONSTRAINT workrow_job_status_check
    CHECK (status IN ('scheduled', 'pending', 'running', 'completed', 'dead', 'cancelled'));

-- Promotion (JobSql.JOB_PROMOTE_SCHEDULED): scheduled rows by due time.
CREATE INDEX workrow_job_scheduled_idx
    ON workrow_job (run_at)
    WHERE status = 'scheduled';

UPDATE workrow_job SET status = 'scheduled' WHERE status = 'pending' AND run_at > now();

-- Retirement covers both waiting statuses.
DROP INDEX workrow_job_exhausted_idx;
CREATE INDEX workrow_job_exhausted_idx
    ON workrow_job (id)
    WHERE status IN ('pending', 'scheduled') AND attempts >= max_attempts;

-- The stats view gains the scheduled count (a new column goes last, as CREATE OR REPLACE VIEW requires).
CREATE OR REPLACE VIEW workrow_queue_stats AS
SELECT job.queue,
       count(*) FILTER (WHERE job.status = 'pending')                          AS pending,
       count(*) FILTER (WHERE job.status = 'pending' AND job.run_at <= now())  AS due,
       count(*) FILTER (WHERE job.status = 'running')                          AS running,
       count(*) FILTER (WHERE job.status = 'completed')                        AS completed,
       count(*) FILTER (WHERE job.status = 'dead')                             AS dead,
       count(*) FILTER (WHERE job.status = 'cancelled')                        AS cancelled,
       coalesce(now() - min(job.run_at) FILTER (WHERE job.status = 'pending' AND job.run_at <= now()),
                interval '0')                                                  AS oldest_due_age,
       coalesce(max(job.attempts) FILTER (WHERE job.status IN ('pending', 'scheduled', 'running')), 0)
                                                                               AS max_attempts_used,
       EXISTS (SELECT 1 FROM workrow_queue_pause pause WHERE pause.queue = job.queue) AS paused,
       count(*) FILTER (WHERE job.status = 'scheduled')                        AS scheduled
FROM workrow_job job
GROUP BY job.queue;

-- Paused queues: a row here stops every node from claiming the queue's jobs (JobSql.JOB_CLAIM
-- checks it once per claim). Stored in the database so a pause holds across nodes and restarts.
CREATE TABLE workrow_queue_pause (
    queue     text        PRIMARY KEY,
    paused_at timestamptz NOT NULL DEFAULT now(),
    reason    text
);

-- Dead jobs are few but looked at often (depth gauge, dead list, retry by queue and error).
CREATE INDEX workrow_job_dead_idx
    ON workrow_job (queue, finished_at)
    WHERE status = 'dead';

-- For people who read the database: one row per queue with its jobs by status, how long the
-- oldest due job has waited, the most attempts any open job has used, and whether it is paused.
CREATE VIEW workrow_queue_stats AS
SELECT job.queue,
       count(*) FILTER (WHERE job.status = 'pending')                          AS pending,
       count(*) FILTER (WHERE job.status = 'pending' AND job.run_at <= now())  AS due,
       count(*) FILTER (WHERE job.status = 'running')                          AS running,
       count(*) FILTER (WHERE job.status = 'completed')                        AS completed,
       count(*) FILTER (WHERE job.status = 'dead')                             AS dead,
       count(*) FILTER (WHERE job.status = 'cancelled')                        AS cancelled,
       coalesce(now() - min(job.run_at) FILTER (WHERE job.status = 'pending' AND job.run_at <= now()),
                interval '0')                                                  AS oldest_due_age,
       coalesce(max(job.attempts) FILTER (WHERE job.status IN ('pending', 'running')), 0) AS max_attempts_used,
       EXISTS (SELECT 1 FROM workrow_queue_pause pause WHERE pause.queue = job.queue) AS paused
FROM workrow_job job
GROUP BY job.queue;

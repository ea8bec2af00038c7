-- Scheduled jobs by queue, so that counting them per queue (JobSql.QUEUE_DEPTH: the gauges,
-- health, QueueAdmin.stats and the dashboard) reads this small index alone instead of a heap row
-- per scheduled job: a million scheduled jobs in ten queues fit in under a thousand pages, since
-- equal keys are stored once. workrow_job_scheduled_idx (run_at) stays for promotion, which walks
-- every queue in due order.
CREATE INDEX workrow_job_scheduled_queue_idx
    ON workrow_job (queue)
    WHERE status = 'scheduled';

-- Dead jobs by queue and kind of error (JobSql's ERROR_KIND: last_error up to its first colon,
-- lease expiries as one kind, '' for none), newest first: the dashboard's groups count from it,
-- each group's newest jobs are its first entries, and retrying or cancelling one group reads
-- only that group's entries. The expression must stay the same as ERROR_KIND for the planner to
-- match it. Dead jobs are few, so the index is small.
CREATE INDEX workrow_job_dead_kind_idx
    ON workrow_job (queue,
                    (CASE WHEN last_error IS NULL THEN ''
                          WHEN last_error LIKE 'lease expired %' THEN 'lease expired'
                          ELSE split_part(last_error, ':', 1) END),
                    finished_at DESC, id DESC)
    WHERE status = 'dead';

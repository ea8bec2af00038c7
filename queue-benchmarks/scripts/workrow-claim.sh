# Sourced by the scripts beside it (on schemas held at version 12, upto=12): the one-row-per-job
# claim as its store ran it before the write-once layout, of $batch jobs of queue bench, returning $1.
claim_statement() {
    echo "WITH open AS (
              SELECT NOT EXISTS (SELECT 1 FROM workrow_queue_pause WHERE queue = 'bench')
                     AND NOT EXISTS (SELECT 1 FROM workrow_breaker WHERE queue = 'bench' AND state <> 'closed') AS open
          ), unkeyed AS (
              SELECT id, priority, run_at FROM workrow_job
              WHERE queue = 'bench' AND status = 'pending' AND partition_key IS NULL AND fairness_key = ''
                AND run_at <= now() AND (SELECT open FROM open)
              ORDER BY priority, run_at, id LIMIT $batch FOR UPDATE SKIP LOCKED
          ), keyed AS (
              SELECT id, priority, run_at FROM workrow_job
              WHERE queue = 'bench' AND status = 'pending' AND (partition_key IS NOT NULL OR fairness_key <> '')
                AND run_at <= now() AND (SELECT open FROM open)
              ORDER BY priority, run_at, id LIMIT $batch FOR UPDATE SKIP LOCKED
          ), due AS (
              SELECT id FROM (SELECT * FROM unkeyed UNION ALL SELECT * FROM keyed) AS candidate
              ORDER BY priority, run_at, id LIMIT $batch
          )
          UPDATE workrow_job AS job
          SET status = 'running', claimed_by = 'worker-1', lease_token = nextval('workrow_lease_token_seq'),
              lease_expires_at = now() + interval '5 minutes', attempts = job.attempts + 1, ordered_key = NULL,
              started_at = now(), updated_at = now()
          FROM due WHERE job.id = due.id
          RETURNING $1"
}

#!/usr/bin/env bash
# Two costs of Workrow's table, in a freshly migrated scratch database:
#  1. what the claim indexes cost an insert: 10,000 pending jobs in one INSERT ... SELECT without
#     keys (one claim-index entry each), then 10,000 with a fairness key (three: keyed claim order,
#     fair claim, keyless claim);
#  2. what a large history costs a claim: EXPLAIN (ANALYZE, BUFFERS) of Workrow's claim of 500 with
#     HISTORY (default 10,000,000) completed jobs beside 100,000 pending ones (rolled back).
# Needs psql on PATH and a local PostgreSQL that trusts the user (defaults: 127.0.0.1:5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

db=workrow_table_costs history=${HISTORY:-10000000}
source queue-benchmarks/scripts/scratch-database.sh

pending() {
    echo "INSERT INTO workrow_job (queue, partition_bucket, payload, status, run_at, max_attempts, fairness_key)
          SELECT 'bench', 0, jsonb_build_object('n', n), 'pending', now(), 5, $2 FROM generate_series(1, $1) AS n;"
}

echo "1. 10,000 pending jobs in one INSERT ... SELECT (third round of each):"
psql_db <<SQL | grep Time
$(pending 10000 "''") $(pending 10000 "''")
\timing on
$(pending 10000 "''")
\timing off
$(pending 10000 "'tenant-' || (n % 100)") $(pending 10000 "'tenant-' || (n % 100)")
\timing on
$(pending 10000 "'tenant-' || (n % 100)")
\timing off
SQL
echo "   (first: without keys; second: with a fairness key)"

echo "2. a claim of 500 beside $history completed jobs and 100,000 pending:"
psql_db -c "TRUNCATE workrow_job"
psql_db -c "INSERT INTO workrow_job (queue, partition_bucket, payload, status, run_at, max_attempts, attempts,
                                     claimed_by, started_at, finished_at)
            SELECT 'bench', 0, jsonb_build_object('n', n), 'completed', now(), 5, 1, 'history', now(), now()
            FROM generate_series(1, $history) AS n"
psql_db -c "$(pending 100000 "''")"
psql_db -c "VACUUM ANALYZE workrow_job"
psql_db <<'SQL'
SET max_parallel_workers_per_gather = 0;
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
WITH open AS (
    SELECT NOT EXISTS (SELECT 1 FROM workrow_queue_pause WHERE queue = 'bench')
           AND NOT EXISTS (SELECT 1 FROM workrow_breaker WHERE queue = 'bench' AND state <> 'closed') AS open
), unkeyed AS (
    SELECT id, priority, run_at FROM workrow_job
    WHERE queue = 'bench' AND status = 'pending' AND partition_key IS NULL AND fairness_key = ''
      AND run_at <= now() AND (SELECT open FROM open)
    ORDER BY priority, run_at, id LIMIT 500 FOR UPDATE SKIP LOCKED
), keyed AS (
    SELECT id, priority, run_at FROM workrow_job
    WHERE queue = 'bench' AND status = 'pending' AND (partition_key IS NOT NULL OR fairness_key <> '')
      AND run_at <= now() AND (SELECT open FROM open)
    ORDER BY priority, run_at, id LIMIT 500 FOR UPDATE SKIP LOCKED
), due AS (
    SELECT id FROM (SELECT * FROM unkeyed UNION ALL SELECT * FROM keyed) AS candidate
    ORDER BY priority, run_at, id LIMIT 500
)
UPDATE workrow_job AS job SET status = 'running', claimed_by = 'w', lease_token = nextval('workrow_lease_token_seq'),
    lease_expires_at = now() + interval '5 minutes', attempts = job.attempts + 1, started_at = now(), updated_at = now()
FROM due WHERE job.id = due.id RETURNING job.id;
ROLLBACK;
SQL

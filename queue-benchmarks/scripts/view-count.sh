#!/usr/bin/env bash
# What a runbook's count by status over the workrow_job view costs in the write-once layout:
# DEAD dead jobs and COMPLETED completed ones (data, home and outcome rows), then
# SELECT status, count(*) FROM workrow_job GROUP BY status, timed in psql with jit off.
# V13 names the layout's migration to apply (default: this checkout's), so an earlier version of
# the view can be measured: git show <commit>:<path of V13> > /tmp/v13.sql; V13=/tmp/v13.sql ...
#
#   [DEAD=25000] [COMPLETED=20000] [V13=...] queue-benchmarks/scripts/view-count.sh
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

dead=${DEAD:-25000} completed=${COMPLETED:-20000}
v13=${V13:-queue-core/src/main/resources/io/workrow/queue/migration/V13__write_once_jobs_and_batch_claims.sql}
db=workrow_view_count upto=12
source queue-benchmarks/scripts/scratch-database.sh
psql_db -1 -f "$v13" >/dev/null

echo "PostgreSQL $(psql_db -c 'SHOW server_version'), shared_buffers $(psql_db -c 'SHOW shared_buffers');"\
     "$dead dead and $completed completed jobs"
psql_db -c "WITH data AS (
                INSERT INTO workrow_job_data (queue, partition_bucket, payload, max_attempts)
                SELECT 'webhooks', 0, '{}', 5 FROM generate_series(1, $dead) RETURNING id, queue
            ), dead AS (
                INSERT INTO workrow_dead (id, queue, attempts, max_attempts, last_error, last_error_at, finished_at)
                SELECT id, queue, 5, 5, 'java.net.ConnectException: refused', now() - interval '1 minute',
                       now() - interval '1 minute' FROM data
            )
            INSERT INTO workrow_outcome (job_id, attempt, queue, status, finished_at, error)
            SELECT id, 5, queue, 'dead', now() - interval '1 minute', 'java.net.ConnectException: refused' FROM data" \
        -c "WITH data AS (
                INSERT INTO workrow_job_data (queue, partition_bucket, payload, max_attempts)
                SELECT 'done', 0, '{}', 5 FROM generate_series(1, $completed) RETURNING id, queue
            )
            INSERT INTO workrow_outcome (job_id, attempt, queue, status, finished_at)
            SELECT id, 1, queue, 'completed', now() - interval '1 minute' FROM data" \
        -c "ANALYZE"
for run in 1 2; do
    psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -v ON_ERROR_STOP=1 \
        -c "SET jit = off" -c '\timing on' -c "SELECT status, count(*) FROM workrow_job GROUP BY status" \
        | sed -n "s/^Time: /count by status, run $run: /p"
done

#!/usr/bin/env bash
# How long the move to the write-once layout (V13) holds a database of version 12: COMPLETED
# completed jobs spread over the last DAYS days (UTC), PENDING pending ones, DEAD dead ones, all
# with a small payload, in the one-row-per-job table of Workrow's migrations up to 12; then V13
# applied in one transaction (as Flyway applies it), timed by psql, and the counts by status read
# back through the view. Idle database: nothing else runs.
#
#   [COMPLETED=1000000] [PENDING=100000] [DEAD=10000] [DAYS=7] queue-benchmarks/scripts/upgrade-to-write-once.sh
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

completed=${COMPLETED:-1000000} pending=${PENDING:-100000} dead=${DEAD:-10000} days=${DAYS:-7}
db=workrow_upgrade upto=12
source queue-benchmarks/scripts/scratch-database.sh

echo "PostgreSQL $(psql_db -c 'SHOW server_version'), shared_buffers $(psql_db -c 'SHOW shared_buffers');"\
     "$completed completed over $days days, $pending pending, $dead dead"
psql_db -c "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts, status, attempts, claimed_by,
                                     started_at, finished_at, created_at)
            SELECT 'receipts', n % 1024, jsonb_build_object('orderId', n), 5, 'completed', 1, 'vm:1:old',
                   now() - (n % $days) * interval '1 day' - interval '1 minute',
                   now() - (n % $days) * interval '1 day', now() - (n % $days) * interval '1 day' - interval '2 minutes'
            FROM generate_series(1, $completed) AS n" \
        -c "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts)
            SELECT 'receipts', n % 1024, jsonb_build_object('orderId', n), 5 FROM generate_series(1, $pending) AS n" \
        -c "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts, status, attempts, last_error,
                                     last_error_at, finished_at)
            SELECT 'webhooks', n % 1024, jsonb_build_object('url', n), 5, 'dead', 5, 'java.net.ConnectException: refused',
                   now(), now() FROM generate_series(1, $dead) AS n" \
        -c "VACUUM ANALYZE workrow_job"
started=$(date +%s.%N)
psql_db -1 -f queue-core/src/main/resources/io/workrow/queue/migration/V13__write_once_jobs_and_batch_claims.sql >/dev/null
ended=$(date +%s.%N)
awk -v started="$started" -v ended="$ended" 'BEGIN { printf "V13 applied in one transaction: %.1f s\n", ended - started }'
psql_db -F ' ' -c "SELECT status, count(*) FROM workrow_job GROUP BY status ORDER BY status"

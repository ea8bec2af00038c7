#!/usr/bin/env bash
# What DELETE FROM workrow_job costs on the write-once layout, where the view's trigger deletes each
# job from every home, its outcome rows included: N completed jobs (over three days) and N pending
# ones in a version 12 table, moved by V13, then the completed ones deleted through the view,
# timed by psql. Idle database.
#
#   [N=10000] queue-benchmarks/scripts/view-delete.sh
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."
db=workrow_view_delete upto=12
source queue-benchmarks/scripts/scratch-database.sh
psql_db -c "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts, status, attempts, started_at, finished_at)
            SELECT 'receipts', 0, '{}', 5, 'completed', 1, now() - (n % 3) * interval '1 day', now() - (n % 3) * interval '1 day'
            FROM generate_series(1, ${N:-10000}) AS n" \
        -c "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts) SELECT 'other', 0, '{}', 5 FROM generate_series(1, ${N:-10000})"
psql_db -1 -f queue-core/src/main/resources/io/workrow/queue/migration/V13__write_once_jobs_and_batch_claims.sql >/dev/null
psql_db -c "VACUUM ANALYZE"
psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -c '\timing on' -c "DELETE FROM workrow_job WHERE queue = 'receipts'" -c "SELECT count(*) FROM workrow_job" | grep -v '^$'

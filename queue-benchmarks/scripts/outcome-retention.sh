#!/usr/bin/env bash
# What retention costs in the write-once layout: the outcome log of V13 (Workrow's migrations,
# applied in a scratch database) holds DAY_JOBS completed attempts in a day past
# the retention and as many in the next day, which stays; the old day is detached and dropped as
# WriteOnceStore.outcomeDaysDrop does it. Idle database: nothing else runs.
#
#   [DAY_JOBS=10000000] queue-benchmarks/scripts/outcome-retention.sh
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres). Loading 2 x DAY_JOBS rows takes minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."

day_jobs=${DAY_JOBS:-10000000}
db=workrow_outcome_retention
source queue-benchmarks/scripts/scratch-database.sh

seconds_since() { echo "$(date +%s.%N) - $1" | bc -l | xargs printf '%.2f'; }

echo "PostgreSQL $(psql_db -c 'SHOW server_version'), shared_buffers $(psql_db -c 'SHOW shared_buffers'),"\
     "autovacuum $(psql_db -c 'SHOW autovacuum'); $day_jobs outcomes in the day dropped, as many in the day kept"

# Two whole days (UTC) ending yesterday: the older is past a retention of one day, the newer is not.
psql_db -c "SELECT workrow_add_outcome_day((now() AT TIME ZONE 'UTC')::date - ago) FROM generate_series(1, 2) AS ago" \
        -c "INSERT INTO workrow_outcome (job_id, attempt, claim_token, queue, status, worker, started_at, finished_at)
            SELECT n, 1, n / 500, 'bench', 'completed', 'worker-1', done, done
            FROM generate_series(1, 2 * $day_jobs) AS n,
                 LATERAL (SELECT ((now() AT TIME ZONE 'UTC')::date - 2)::timestamp AT TIME ZONE 'UTC'
                                 + (n - 1) * (interval '2 days' / (2 * $day_jobs)) AS done) AS t" \
        -c "VACUUM ANALYZE workrow_outcome" -c "CHECKPOINT" >/dev/null
size_before=$(psql_db -c "SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) FROM pg_partition_tree('workrow_outcome')")
old_day=$(psql_db -c "SELECT 'workrow_outcome_' || to_char((now() AT TIME ZONE 'UTC')::date - 2, 'YYYYMMDD')")
rows=$(psql_db -c "SELECT count(*) FROM $old_day")
# Retention's two steps, each its own transaction as WriteOnceStore.outcomeDaysDrop runs them: the
# detach (the one moment every statement on the log waits for) and the drop (the files unlinked,
# the parent no longer locked).
started=$(date +%s.%N)
psql_db -c "ALTER TABLE workrow_outcome DETACH PARTITION $old_day"
detach_seconds=$(seconds_since "$started")
started=$(date +%s.%N)
psql_db -c "DROP TABLE $old_day"
unlink_seconds=$(seconds_since "$started")
echo "dropped $old_day ($rows rows): DETACH $detach_seconds s, then DROP $unlink_seconds s; no VACUUM owed;"\
     "log $size_before before, \
$(psql_db -c "SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) FROM pg_partition_tree('workrow_outcome')") after,"\
     "$(psql_db -c "SELECT count(*) FROM workrow_outcome") rows kept"

#!/usr/bin/env bash
# What workrow_job_fair_claim_idx costs an enqueue on any queue: pgbench inserts keyless jobs,
# 100 per statement from 4 clients, into a freshly migrated scratch database, alternating rounds
# with and without the index. Prints rows/s for each round. Needs psql and pgbench on PATH and a
# local PostgreSQL that trusts the user (defaults: 127.0.0.1:5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

db=workrow_fair_index_cost seconds=${SECONDS_PER_ROUND:-12} rounds=${ROUNDS:-2}
source queue-benchmarks/scripts/scratch-database.sh
index=$(psql_db -c "SELECT indexdef FROM pg_indexes WHERE indexname = 'workrow_job_fair_claim_idx'")
script=$(mktemp)
echo "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts)
      SELECT 'plain', 0, '{\"n\":1}', 5 FROM generate_series(1, 100);" > "$script"

round() {
    psql_db -c "TRUNCATE workrow_job"
    psql_db -c "VACUUM ANALYZE workrow_job"
    tps=$(pgbench -h "$host" -p "$port" -U "$user" -n -c 4 -j 2 -T "$seconds" -f "$script" "$db" 2>/dev/null \
        | awk '/^tps/ {print $3}')
    awk -v label="$1" -v tps="$tps" 'BEGIN { printf "%-26s %8.0f rows/s\n", label, tps * 100 }'
}
for r in $(seq 1 "$rounds"); do
    round "round $r, with the index"
    psql_db -c "DROP INDEX workrow_job_fair_claim_idx"
    round "round $r, without"
    psql_db -c "$index"
done
rm -f "$script"

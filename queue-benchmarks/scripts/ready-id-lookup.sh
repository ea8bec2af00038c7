#!/usr/bin/env bash
# What a lookup of a waiting job by id costs in the write-once layout (a cancel, a job's page):
# workrow_ready's id index is a BRIN, cheap to write and narrow while ids arrive in order; claims,
# retries and new jobs reuse the space of claimed rows, which widens its ranges. JOBS waiting jobs
# are looked up fresh, then after ROUNDS rounds of churn, each: claim the 100,000 oldest, VACUUM
# (as autovacuum would), retry a quarter of them, enqueue 75,000 new ones. Idle database.
#
#   [JOBS=1000000] [ROUNDS=20] queue-benchmarks/scripts/ready-id-lookup.sh
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

jobs=${JOBS:-1000000} rounds=${ROUNDS:-20}
db=workrow_ready_id_lookup
source queue-benchmarks/scripts/scratch-database.sh

echo "PostgreSQL $(psql_db -c 'SHOW server_version'), shared_buffers $(psql_db -c 'SHOW shared_buffers'),"\
     "autovacuum $(psql_db -c 'SHOW autovacuum'); $jobs waiting jobs, $rounds rounds of churn"

lookup() { # $1: what, $2: the id
    psql_db -c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM workrow_ready WHERE id = $2" \
        | awk -v what="$1" '/Heap Blocks/ { blocks = $0 } /Execution Time/ { time = $3 }
                            END { sub(/.*lossy=/, "", blocks); printf "%-32s %6s heap pages read, %8s ms\n", what, blocks, time }'
}

psql_db -c "INSERT INTO workrow_ready (id, queue, priority, run_at, max_attempts, partition_bucket)
            SELECT i, 'q', 0, now(), 5, 0 FROM generate_series(1, $jobs) AS i" \
        -c "VACUUM ANALYZE workrow_ready"
lookup "fresh, an id in the middle" $((jobs / 2 + 123))

for _ in $(seq 1 "$rounds"); do
    psql_db -c "CREATE TEMPORARY TABLE taken AS
                WITH claimed AS (DELETE FROM workrow_ready
                                 WHERE id IN (SELECT id FROM workrow_ready ORDER BY run_at, id LIMIT 100000)
                                 RETURNING id)
                SELECT id FROM claimed" \
            -c "VACUUM workrow_ready" \
            -c "INSERT INTO workrow_ready (id, queue, priority, run_at, max_attempts, partition_bucket)
                SELECT id, 'q', 0, now() + interval '2 hours', 5, 0 FROM taken WHERE id % 4 = 0" \
            -c "INSERT INTO workrow_ready (id, queue, priority, run_at, max_attempts, partition_bucket)
                SELECT i, 'q', 0, now() + interval '2 hours', 5, 0
                FROM generate_series((SELECT max(id) + 1 FROM workrow_ready), (SELECT max(id) + 75000 FROM workrow_ready)) AS i"
done
psql_db -c "VACUUM ANALYZE workrow_ready"
echo "after churn: $(psql_db -c "SELECT count(*) || ' waiting, ' || pg_relation_size('workrow_ready') / 8192 || ' pages' FROM workrow_ready")"
lookup "after churn, an old id" $((jobs / 2 + 124))
lookup "after churn, a recent id" "$(psql_db -c 'SELECT max(id) - 1000 FROM workrow_ready')"

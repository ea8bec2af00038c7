#!/usr/bin/env bash
# Two costs of Workrow's table, in a freshly migrated scratch database:
#  1. what the claim indexes cost an insert: 10,000 pending jobs in one INSERT ... SELECT without
#     keys (one claim-index entry each), then 10,000 with a fairness key (three: keyed claim order,
#     fair claim, keyless claim);
#  2. what one bulk enqueue costs the server: JdbcJobQueue.enqueueAll's statement for 1,000 jobs
#     without keys, from the same arrays it binds, timed in turns: without ON CONFLICT (as sent
#     when no job has an idempotency key), with ON CONFLICT, and without ON CONFLICT beside the
#     three claim indexes every pending job was written to before version 8 (rolled back);
#  3. what a large history costs a claim: EXPLAIN (ANALYZE, BUFFERS) of Workrow's claim of 500 with
#     HISTORY (default 10,000,000) completed jobs beside 100,000 pending ones (rolled back).
# Needs psql on PATH and a local PostgreSQL that trusts the user (defaults: 127.0.0.1:5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

db=workrow_table_costs upto=12 history=${HISTORY:-10000000}
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

bulk() {
    echo "EXECUTE $1(:'queues', :'nulls', :'zeros', :'zeros', :'nulls', :'payloads', :'headers', :'nulls',
                     :'nulls', :'attempts', :'nulls');"
}
echo "2. one enqueueAll of 1,000 jobs, server time in ms, nine rounds of the three in turns:"
echo "   (without ON CONFLICT / with ON CONFLICT / without, beside the three claim indexes of version 7)"
psql_db <<SQL | grep Time | awk '{ t[NR % 3, int((NR - 1) / 3)] = $2 }
    END { for (i = 0; i < 9; i++) printf "   round %d: %s / %s / %s\n", i + 1, t[1, i], t[2, i], t[0, i] }'

SELECT array_agg('bench'::text) AS queues, array_agg(NULL::text) AS nulls, array_agg(0) AS zeros,
       array_agg(format('{"n": %s, "t": 1763938000123.5}', n)) AS payloads, array_agg('{}'::text) AS headers,
       array_agg(5) AS attempts
FROM generate_series(1, 1000) AS n \gset
$(for variant in plain conflict; do
    echo "PREPARE $variant(text[], text[], int[], int[], text[], text[], text[], text[], bigint[], int[], text[]) AS
          INSERT INTO workrow_job (queue, partition_key, partition_bucket, priority, idempotency_key,
                                   payload, headers, status, run_at, max_attempts, fairness_key)
          SELECT input.queue, input.partition_key, input.partition_bucket::smallint, input.priority::smallint,
                 input.idempotency_key, input.payload::jsonb, input.headers::jsonb,
                 CASE WHEN due.run_at > statement_timestamp() THEN 'scheduled' ELSE 'pending' END,
                 due.run_at, input.max_attempts, coalesce(input.fairness_key, input.partition_key, '')
          FROM unnest(\$1, \$2, \$3, \$4, \$5, \$6, \$7, \$8, \$9, \$10, \$11)
               WITH ORDINALITY AS input(queue, partition_key, partition_bucket, priority, idempotency_key,
                                        payload, headers, run_at, delay_ms, max_attempts, fairness_key, ord)
          CROSS JOIN LATERAL (SELECT coalesce(input.run_at::timestamptz, statement_timestamp()
                                  + coalesce(input.delay_ms, 0) * interval '1 millisecond') AS run_at) AS due
          ORDER BY input.ord
          $([ $variant = conflict ] && echo "ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING")
          RETURNING id, queue, idempotency_key;"
done)
\o /dev/null
$(bulk plain) $(bulk conflict)
\o
$(for round in 1 2 3 4 5 6 7 8 9; do
    echo "\\timing on"
    echo "\\o /dev/null"
    bulk plain
    bulk conflict
    echo "\\timing off"
    echo "BEGIN;"
    echo "CREATE INDEX v7_claim ON workrow_job (queue, priority, run_at, id) WHERE status = 'pending';"
    echo "CREATE INDEX v7_keyless ON workrow_job (queue, priority, run_at, id) WHERE status = 'pending' AND partition_key IS NULL;"
    echo "CREATE INDEX v7_fair ON workrow_job (queue, fairness_key, priority, run_at, id) WHERE status = 'pending';"
    echo "\\timing on"
    bulk plain
    echo "\\timing off"
    echo "ROLLBACK;"
    bulk plain  # untimed: the first insert after the rollback is slower, whichever it is
    echo "\\o"
done)
SQL

echo "3. a claim of 500 beside $history completed jobs and 100,000 pending:"
psql_db -c "TRUNCATE workrow_job"
psql_db -c "INSERT INTO workrow_job (queue, partition_bucket, payload, status, run_at, max_attempts, attempts,
                                     claimed_by, started_at, finished_at)
            SELECT 'bench', 0, jsonb_build_object('n', n), 'completed', now(), 5, 1, 'history', now(), now()
            FROM generate_series(1, $history) AS n"
psql_db -c "$(pending 100000 "''")"
psql_db -c "VACUUM ANALYZE workrow_job"
batch=500
psql_db <<SQL
SET max_parallel_workers_per_gather = 0;
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $(claim_statement "job.id");
ROLLBACK;
SQL

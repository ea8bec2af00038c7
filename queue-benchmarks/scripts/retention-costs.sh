#!/usr/bin/env bash
# What pruning one day of finished jobs costs: today's layout, where retention deletes rows in
# batches (the one-row-per-job store's JOB_PRUNE_FINISHED, 1,000 rows a statement as RetentionPruner ran it) and a
# VACUUM must then reclaim them, against an outcome log partitioned by day, where retention
# detaches and drops the day's partition. Each side holds DAY_JOBS finished jobs in the day to
# prune and as many in the next day, which stays.
#
#   [DAY_JOBS=10000000] queue-benchmarks/scripts/retention-costs.sh
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres). Loading 2 x DAY_JOBS rows on each side takes minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."

day_jobs=${DAY_JOBS:-10000000}
batch=1000
db=workrow_retention_costs upto=12
source queue-benchmarks/scripts/scratch-database.sh

seconds_since() { echo "$(date +%s.%N) - $1" | bc -l | xargs printf '%.2f'; }

echo "PostgreSQL $(psql_db -c 'SHOW server_version'), shared_buffers $(psql_db -c 'SHOW shared_buffers'),"\
     "autovacuum $(psql_db -c 'SHOW autovacuum'); $day_jobs finished jobs in the day pruned, as many in the day kept"

# Today's layout: two days of completed jobs, the older one past a one-day retention.
psql_db -c "INSERT INTO workrow_job (queue, partition_bucket, payload, status, attempts, max_attempts, run_at,
                                     started_at, finished_at, created_at)
            SELECT 'bench', 0, jsonb_build_object('n', n), 'completed', 1, 5, done, done, done, done
            FROM generate_series(1, 2 * $day_jobs) AS n,
                 LATERAL (SELECT now() - interval '2 days' + n * (interval '2 days' / (2 * $day_jobs)) AS done) AS t" \
        -c "VACUUM ANALYZE workrow_job" -c "CHECKPOINT"
size_before=$(psql_db -c "SELECT pg_size_pretty(pg_total_relation_size('workrow_job'))")
started=$(date +%s.%N)
# The pruner's loop, in one session: a batch a transaction until a batch comes back short.
deleted=$(psql_db -c "CREATE TEMPORARY TABLE pruned (rows bigint)" -c "DO \$\$
    DECLARE
        total bigint := 0;
        count integer;
    BEGIN
        LOOP
            WITH old AS (SELECT id FROM workrow_job
                         WHERE status IN ('completed', 'dead', 'cancelled') AND status = 'completed'
                           AND finished_at < statement_timestamp() - interval '1 day'
                         ORDER BY status, finished_at LIMIT $batch FOR UPDATE SKIP LOCKED)
            DELETE FROM workrow_job AS job USING old WHERE job.id = old.id;
            GET DIAGNOSTICS count = ROW_COUNT;
            total := total + count;
            COMMIT;
            EXIT WHEN count < $batch;
        END LOOP;
        INSERT INTO pruned VALUES (total);
    END \$\$" -c "SELECT rows FROM pruned")
delete_seconds=$(seconds_since "$started")
started=$(date +%s.%N)
psql_db -c "VACUUM workrow_job"
vacuum_seconds=$(seconds_since "$started")
echo "rows, today's layout:      deleted $deleted rows in $delete_seconds s ($((deleted / batch + 1)) statements),"\
     "then VACUUM $vacuum_seconds s; table and indexes $size_before before, \
$(psql_db -c "SELECT pg_size_pretty(pg_total_relation_size('workrow_job'))") after (the space is reused, not returned)"
psql_db -c "TRUNCATE workrow_job"

# The outcome log, one partition a day.
psql_db -c "CREATE TABLE outcome (job_id bigint NOT NULL, attempt integer NOT NULL, claim_token bigint NOT NULL,
                                  queue text NOT NULL, status text NOT NULL, finished_at timestamptz NOT NULL,
                                  worker text, error text) PARTITION BY RANGE (finished_at);
            CREATE INDEX outcome_finished_idx ON outcome USING brin (finished_at);
            CREATE INDEX outcome_job_idx ON outcome USING brin (job_id);
            CREATE INDEX outcome_dead_idx ON outcome (queue, finished_at) WHERE status = 'dead';" \
        -c "DO \$\$
            BEGIN
                EXECUTE format('CREATE TABLE outcome_old PARTITION OF outcome FOR VALUES FROM (%L) TO (%L)',
                               now() - interval '2 days', now() - interval '1 day');
                EXECUTE format('CREATE TABLE outcome_kept PARTITION OF outcome FOR VALUES FROM (%L) TO (%L)',
                               now() - interval '1 day', now() + interval '1 day');
            END \$\$" \
        -c "INSERT INTO outcome (job_id, attempt, claim_token, queue, status, finished_at, worker)
            SELECT n, 1, n / 500, 'bench', 'completed', done, 'worker-1'
            FROM generate_series(1, 2 * $day_jobs - 2) AS n,
                 LATERAL (SELECT now() - interval '2 days' + n * (interval '2 days' / (2 * $day_jobs)) AS done) AS t" \
        -c "VACUUM ANALYZE outcome" -c "CHECKPOINT"
size_before=$(psql_db -c "SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) FROM pg_partition_tree('outcome')")
rows=$(psql_db -c "SELECT count(*) FROM outcome_old")
started=$(date +%s.%N)
psql_db -c "ALTER TABLE outcome DETACH PARTITION outcome_old" -c "DROP TABLE outcome_old"
drop_seconds=$(seconds_since "$started")
echo "partitions, outcome log:   detached and dropped $rows rows in $drop_seconds s, no VACUUM owed;"\
     "log $size_before before, \
$(psql_db -c "SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) FROM pg_partition_tree('outcome')") after"

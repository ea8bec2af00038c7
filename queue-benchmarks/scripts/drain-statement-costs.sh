#!/usr/bin/env bash
# What each statement of a drain costs the server, per batch of 500 jobs, in a freshly migrated
# scratch database: the median execution and planning times over ROUNDS (default 15) batches of
# each variant, run in turns, and the WAL records and bytes of the last batch (EXPLAIN (ANALYZE,
# WAL), timing off). The commit, the client round trip and vacuuming the dead rows later are not
# in these figures, so the differences between variants are upper bounds on what a drain gains.
#
#  claims, of 60,000 pending jobs without keys:
#    claim               Workrow's claim (JOB_CLAIM) with the runtime's columns back
#    claim, ids only     the same, returning only ids and tokens
#  ends, of 60,000 running jobs, each batch fenced by id and token; all but the "no lock" ones
#  first lock the batch's rows with SKIP LOCKED, as JOB_COMPLETE_MANY does, so that one row
#  another transaction holds never stalls a batch:
#    complete in place   Workrow's JOB_COMPLETE_MANY: updated to completed
#    in place, no lock   the same update without the explicit row lock
#    move, indexed       deleted, and inserted as completed into a history table with a primary key
#                        and a BRIN index on finished_at (finished jobs stay findable by id)
#    move, no index      the same into a history table without indexes
#    delete              deleted and kept nowhere
#    delete, no lock     the same without the explicit row lock, as graphile-worker ends a job
#
#   [ROUNDS=15] [FILLFACTOR=100] queue-benchmarks/scripts/drain-statement-costs.sh
#
# FILLFACTOR sets the job table's fill factor before the jobs are written.
#
# Needs psql on PATH and a local PostgreSQL that trusts the user (defaults: 127.0.0.1:5432, postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."

jobs=60000
batch=500
rounds=${ROUNDS:-15}
fillfactor=${FILLFACTOR:-100}
ends=("complete in place" "in place, no lock" "move, indexed" "move, no index" delete "delete, no lock")
if [ $((rounds * ${#ends[@]} * batch)) -gt $jobs ]; then
    echo "ROUNDS=$rounds needs more than $jobs jobs; at most $((jobs / batch / ${#ends[@]}))" >&2
    exit 2
fi

db=workrow_drain_statement_costs upto=12
source queue-benchmarks/scripts/scratch-database.sh
psql_db -c "ALTER TABLE workrow_job SET (fillfactor = $((fillfactor)))"

# 60,000 jobs of queue bench in state $1, ids 1..60,000 and, when running, the same lease tokens.
fill_jobs() {
    local lease="NULL, NULL, NULL, 0, NULL"
    [ "$1" = running ] && lease="'worker-1', n, now() + interval '5 minutes', 1, now()"
    echo "TRUNCATE workrow_job;
          INSERT INTO workrow_job (id, queue, partition_bucket, payload, status, run_at, max_attempts, fairness_key,
                                   claimed_by, lease_token, lease_expires_at, attempts, started_at)
          OVERRIDING SYSTEM VALUE
          SELECT n, 'bench', 0, jsonb_build_object('n', n, 't', 1763938000123.5), '$1',
                 now() - interval '1 minute', 5, '', $lease
          FROM generate_series(1, $jobs) AS n;
          VACUUM ANALYZE workrow_job;
          CHECKPOINT;"
}

# The ids and tokens of batch $1 (from 0), as fill_jobs gives them: both from 500 × $1 + 1.
batch_ids_and_tokens() {
    local first=$(($1 * batch + 1)) last=$((($1 + 1) * batch))
    echo "unnest(ARRAY(SELECT generate_series($first, $last)::bigint),
                 ARRAY(SELECT generate_series($first, $last)::bigint)) AS done(id, token)"
}

returning_columns="job.id, job.queue, job.partition_key, job.idempotency_key, job.payload::text AS payload,
                   job.headers::text AS headers, job.attempts, job.max_attempts, job.step, job.lease_token, job.run_at"

completed="status = 'completed', finished_at = clock_timestamp(), updated_at = clock_timestamp(),
           lease_expires_at = NULL, lease_token = NULL"

# The statement that ends batch $2 in variant $1.
end_statement() {
    local locked="held AS (SELECT job.id FROM $(batch_ids_and_tokens "$2") JOIN workrow_job AS job
                           ON job.id = done.id AND job.lease_token = done.token FOR UPDATE OF job SKIP LOCKED)"
    case $1 in
    "complete in place")
        echo "WITH $locked UPDATE workrow_job AS job SET $completed FROM held WHERE job.id = held.id RETURNING job.id" ;;
    "in place, no lock")
        echo "UPDATE workrow_job AS job SET $completed FROM $(batch_ids_and_tokens "$2")
              WHERE job.id = done.id AND job.lease_token = done.token RETURNING job.id" ;;
    "move, indexed" | "move, no index")
        local table=history_indexed
        [ "$1" = "move, no index" ] && table=history_plain
        echo "WITH $locked, gone AS (DELETE FROM workrow_job AS job USING held WHERE job.id = held.id RETURNING job.*)
              INSERT INTO $table ($columns) SELECT $moved_values FROM gone RETURNING id" ;;
    delete)
        echo "WITH $locked DELETE FROM workrow_job AS job USING held WHERE job.id = held.id RETURNING job.id" ;;
    "delete, no lock")
        echo "DELETE FROM workrow_job AS job USING $(batch_ids_and_tokens "$2")
              WHERE job.id = done.id AND job.lease_token = done.token RETURNING job.id" ;;
    esac
}

# Reads EXPLAIN output with "@ <variant>" lines before each plan; prints each variant's median
# execution and planning times and the WAL of its last statement (all from the plan's top node,
# which counts the whole statement), and fails if a statement did not handle a whole batch. The
# runtime plans its claim at every call, as here (a custom plan: its LIMITs are parameters, and
# PostgreSQL will not trust a generic plan that must guess them); its completion has in every test
# been planned once per connection (a generic plan after five calls), so an end's planning time is
# not part of what it costs a drain.
summarize() {
    awk -v batch="$batch" '
         /^@ / { variant = substr($0, 3); top = 1; if (!(variant in seen)) { seen[variant] = 1; order[++n] = variant } }
         top && /actual rows=/ {
             match($0, /actual rows=[0-9]+/); rows = substr($0, RSTART + 12, RLENGTH - 12)
             if (rows != batch) { print "   " variant ": a statement handled " rows " rows, not " batch; failed = 1 }
             top = 0; wal_next = 1
         }
         wal_next && /WAL: records=/ { wal[variant] = $0; wal_next = 0 }
         /Execution Time:/ { times[variant] = times[variant] " " $3 }
         /Planning Time:/ { plans[variant] = plans[variant] " " $3 }
         END {
             for (i = 1; i <= n; i++) {
                 v = order[i]; sub(/^ *WAL: /, "", wal[v])
                 printf "   %-20s %6.2f ms, planned in %.2f ms  (%s; %d batches)\n", v, median(times[v]),
                        median(plans[v]), wal[v], split(substr(times[v], 2), t, " ")
             }
             exit failed
         }
         function median(list,    t, count, a, b, x) {
             count = split(substr(list, 2), t, " ")
             for (a = 1; a <= count; a++) for (b = a + 1; b <= count; b++) if (t[b] + 0 < t[a] + 0) { x = t[a]; t[a] = t[b]; t[b] = x }
             return count % 2 ? t[(count + 1) / 2] : (t[count / 2] + t[count / 2 + 1]) / 2
         }'
}

version=$(psql_db -c 'SHOW server_version')
echo "Server time per statement of $batch jobs, median of $rounds, PostgreSQL $version, fill factor $fillfactor"
echo "1. claims of $batch pending jobs:"
fill_jobs pending | psql_db
{
    for round in $(seq 1 "$rounds"); do
        echo "\\echo @ claim"
        echo "EXPLAIN (ANALYZE, WAL, TIMING OFF, SUMMARY ON) $(claim_statement "$returning_columns");"
        echo "\\echo @ claim, ids only"
        echo "EXPLAIN (ANALYZE, WAL, TIMING OFF, SUMMARY ON) $(claim_statement "job.id, job.lease_token");"
    done
} | psql_db | summarize

echo "2. ends of $batch running jobs:"
# Both history tables hold 100,000 finished jobs before the first batch, and the BRIN index is
# built after them, so that the batches insert into page ranges it has not summarized, as in a
# table that has been filling for a while (inserts into the one summarized range cost more).
psql_db -c "CREATE TABLE history_indexed (LIKE workrow_job INCLUDING DEFAULTS);
            ALTER TABLE history_indexed ADD PRIMARY KEY (id);
            CREATE TABLE history_plain (LIKE workrow_job INCLUDING DEFAULTS);"
for table in history_indexed history_plain; do
    psql_db -c "INSERT INTO $table (id, queue, partition_bucket, payload, status, run_at, max_attempts, fairness_key,
                                    attempts, claimed_by, started_at, finished_at)
                SELECT -n, 'bench', 0, jsonb_build_object('n', n), 'completed', now(), 5, '', 1, 'history', now(), now()
                FROM generate_series(1, 100000) AS n"
done
psql_db -c "CREATE INDEX ON history_indexed USING brin (finished_at)"
fill_jobs running | psql_db
# Every column as it was, but those a completion sets.
columns=$(psql_db -c "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns
                      WHERE table_schema = current_schema() AND table_name = 'workrow_job'")
moved_values=$(psql_db -c "SELECT string_agg(CASE column_name WHEN 'status' THEN quote_literal('completed')
                                    WHEN 'finished_at' THEN 'clock_timestamp()' WHEN 'updated_at' THEN 'clock_timestamp()'
                                    WHEN 'lease_expires_at' THEN 'NULL' WHEN 'lease_token' THEN 'NULL'
                                    ELSE 'gone.' || column_name END, ', ' ORDER BY ordinal_position)
                           FROM information_schema.columns
                           WHERE table_schema = current_schema() AND table_name = 'workrow_job'")
{
    batch_number=0
    for round in $(seq 1 "$rounds"); do
        for variant in "${ends[@]}"; do
            echo "\\echo @ $variant"
            echo "EXPLAIN (ANALYZE, WAL, TIMING OFF, SUMMARY ON) $(end_statement "$variant" $batch_number);"
            batch_number=$((batch_number + 1))
        done
    done
} | psql_db | summarize

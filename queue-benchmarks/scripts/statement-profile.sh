#!/usr/bin/env bash
# Where the database's time goes in a drain the runtime runs: loads pg_stat_statements into the
# local Debian cluster on port 5432 (shared_preload_libraries, a restart; both undone on exit),
# runs DrainBenchmark with the engine's defaults (JOBS no-op jobs, concurrency 8, no light-load
# phase), and prints every statement that ran, by total execution time, with its calls, rows,
# mean time, planning time and its time per job drained (docs/performance.md).
#
#   JOBS=200000 queue-benchmarks/scripts/statement-profile.sh
#
# Needs the cluster's postgresql-contrib (Debian ships pg_stat_statements with the server), root
# for pg_ctlcluster, and the benchmark classpath (built here; Maven Central reachable).
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=${JOBS:-200000}
version=$(pg_lsclusters --no-header | awk '$3 == 5432 {print $1}' | head -1)
cluster=$(pg_lsclusters --no-header | awk '$3 == 5432 {print $2}' | head -1)
psql() { command psql -h 127.0.0.1 -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
restart() { pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" restart; sleep 2; }

./mvnw -B -q -pl queue-benchmarks -am package -DskipTests \
    dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >/dev/null
classpath="queue-benchmarks/target/classes:$(cat queue-benchmarks/target/classpath.txt)"

# The library's own settings exist only once it is loaded: set after the restart, reset before it.
trap 'psql -c "ALTER SYSTEM RESET pg_stat_statements.track_planning" || true
      psql -c "ALTER SYSTEM RESET shared_preload_libraries" || true
      restart' EXIT
psql -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
restart
psql -c "ALTER SYSTEM SET pg_stat_statements.track_planning = on" -c "SELECT pg_reload_conf()" >/dev/null
psql -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null

java -Xmx1g -cp "$classpath" io.workrow.queue.benchmark.DrainBenchmark --jobs="$jobs" --concurrency=8 \
    --light-jobs=0 --url=jdbc:postgresql://127.0.0.1:5432/postgres --user=postgres --password= \
    | grep -E "^(Workrow|enqueue|drain):"

echo
echo "statement | calls | rows | total ms | mean ms | plan ms | µs per job"
psql -F ' | ' -c "
    SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 110), calls, rows,
           round(total_exec_time::numeric, 0), round(mean_exec_time::numeric, 3),
           round(total_plan_time::numeric, 0), round((1000 * (total_exec_time + total_plan_time) / $jobs)::numeric, 2)
    FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres') AND calls > 0
    ORDER BY total_exec_time + total_plan_time DESC
    LIMIT 25"

#!/usr/bin/env bash
# How busy Workrow's claim and completion connections are during a drain: turns on PostgreSQL's
# statement log (log_min_duration_statement = 0, reset on exit), runs one no-op drain-only
# CompareBenchmark (one and two worker JVMs, then the raw-SQL limit), and prints, per backend
# that ran claims or completions, how many, their mean duration, and the mean and median gap
# between the end of one and the start of the next (docs/performance.md). Backends are listed in
# the order they started: the one-JVM drain's poller and writer, the two JVMs', then the raw-SQL
# clients (and, before them, any that ran earlier in the log segment).
#
#   queue-benchmarks/scripts/statement-gaps.sh
#
# Needs a local Debian PostgreSQL cluster on 5432 whose log file pg_lsclusters names and that
# this user may reconfigure (as postgres: trust), python3, and the benchmark classpath (built here).
set -euo pipefail
cd "$(dirname "$0")/../.."

log=$(pg_lsclusters --no-header | awk '$3 == 5432 {print $7}' | head -1)
[ -r "$log" ] || { echo "cannot read the cluster's log file ($log)" >&2; exit 1; }
psql() { command psql -h 127.0.0.1 -U postgres -d postgres -qAtc "$1" >/dev/null; }

./mvnw -B -q -pl queue-benchmarks -am package -DskipTests \
    dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >/dev/null
classpath="queue-benchmarks/target/classes:$(cat queue-benchmarks/target/classpath.txt)"

start=$(($(wc -l < "$log") + 1))
trap 'psql "ALTER SYSTEM RESET log_min_duration_statement"; psql "SELECT pg_reload_conf()"' EXIT
psql "ALTER SYSTEM SET log_min_duration_statement = 0"
psql "SELECT pg_reload_conf()"
java -cp "$classpath" io.workrow.queue.benchmark.compare.CompareBenchmark --only=workrow --drain-only=true \
    | grep -E "noop|raw SQL,"

tail -n +"$start" "$log" | python3 -c '
import re, sys, datetime, collections, statistics
line_re = re.compile(r"(\S+ \S+) UTC \[(\d+)\] \S+ LOG:  duration: ([\d.]+) ms  (bind|execute)[^:]*: (.*)")
def kind(sql):
    if "SKIP LOCKED" in sql and "claimed_by" in sql: return "claim"
    if "status = \x27completed\x27" in sql: return "complete"
    return None
entries = []                                 # a statement's text runs on over indented lines
for line in sys.stdin:
    m = line_re.match(line)
    if m:
        entries.append([m, m.group(5)])
    elif entries and line.startswith("\t"):
        entries[-1][1] += " " + line.strip()
events = collections.defaultdict(list)      # pid -> [(phase, end_ms, duration_ms, kind)]
for m, sql in entries:
    end = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp() * 1000
    events[int(m.group(2))].append((m.group(4), end, float(m.group(3)), kind(sql)))
print("backend  first at      kind      statements  mean ms  gap mean ms  gap median ms")
for pid, evs in events.items():
    executes = [e for e in evs if e[0] == "execute" and e[3]]
    if len(executes) < 20: continue
    gaps, previous_end = [], None
    for phase, end, duration, k in evs:
        if phase == "bind" and previous_end is not None: gaps.append(end - duration - previous_end)
        if phase == "execute": previous_end = end
    k = collections.Counter(e[3] for e in executes).most_common(1)[0][0]
    first = datetime.datetime.fromtimestamp(evs[0][1] / 1000).strftime("%H:%M:%S.%f")[:12]
    print(f"{pid:7d}  {first}  {k:8s}  {len(executes):10d}  {statistics.mean(e[2] for e in executes):7.1f}"
          f"  {statistics.mean(gaps):11.2f}  {statistics.median(gaps):13.2f}")
'

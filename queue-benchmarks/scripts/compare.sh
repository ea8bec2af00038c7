#!/usr/bin/env bash
# Workrow beside graphile-worker, pg-boss, db-scheduler and the raw-SQL limit, in one run against
# one PostgreSQL server; prints one Markdown table and the ratios (docs/performance.md).
#
#   queue-benchmarks/scripts/compare.sh [-Dbenchmark.rounds=2] [-Dbenchmark.jobs=100000]
#
# Installs the Node peers at the versions pinned in queue-benchmarks/peers/package.json into a
# temporary directory (removed on exit), then runs CompareBenchmark through Maven. Needs node and
# npm on PATH, the npm registry and Maven Central, and a local PostgreSQL that trusts the user
# (default jdbc:postgresql://localhost:5432/postgres as postgres; -Dbenchmark.jdbc.url to change).
# The benchmark drops and recreates the database workrow_compare on that server.
set -euo pipefail
cd "$(dirname "$0")/../.."

peers=$(mktemp -d)
trap 'rm -rf "$peers"' EXIT
cp queue-benchmarks/peers/package.json queue-benchmarks/peers/*.mjs "$peers"/
(cd "$peers" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"

./mvnw -B -q -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
    -Dbenchmark.main=io.workrow.queue.benchmark.compare.CompareBenchmark \
    -Dbenchmark.peers="$peers" "$@"

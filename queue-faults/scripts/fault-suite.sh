#!/usr/bin/env bash
# The fault suite at full scale (docs/reliability.md): worker JVMs killed with kill -9, frozen with
# SIGSTOP, stopped with SIGTERM, with jobs longer than their lease; one JSON line of figures per
# scenario. Drops and recreates the database workrow_faults on the local PostgreSQL (as postgres;
# -Dfaults.jdbc.url=jdbc:postgresql://host:port/postgres to change).
#
#   queue-faults/scripts/fault-suite.sh [scenario ...]   # names: FaultSuite.SCENARIOS (all without)
set -euo pipefail
cd "$(dirname "$0")/../.."

java_options=()
scenarios=()
for argument in "$@"; do
    case "$argument" in
        -D*) java_options+=("$argument") ;;
        *) scenarios+=("$argument") ;;
    esac
done

./mvnw -B -q -pl queue-faults -am package -DskipTests \
    dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >/dev/null
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
cd queue-faults
exec java "${java_options[@]}" -cp "target/classes:$(cat target/classpath.txt)" \
    io.workrow.queue.faults.FaultSuite "${scenarios[@]}"

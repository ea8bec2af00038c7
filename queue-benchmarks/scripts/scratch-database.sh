# Sourced by the scripts beside it: a scratch database named $db with Workrow's migrations applied
# (up to version $upto when it is set: upto=12 keeps the one-row-per-job layout),
# dropped again on exit, psql_db to run SQL in it, and claim_statement, Workrow's claim
# (workrow-claim.sh).
# Connection: PGHOST, PGPORT, PGUSER (defaults 127.0.0.1, 5432, postgres), trust authentication.
host=${PGHOST:-127.0.0.1} port=${PGPORT:-5432} user=${PGUSER:-postgres}
psql_db() { psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -v ON_ERROR_STOP=1 "$@"; }

psql -h "$host" -p "$port" -U "$user" -d postgres -q -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql -h "$host" -p "$port" -U "$user" -d postgres -q -c "DROP DATABASE IF EXISTS $db"' EXIT
# In version order: V10 must follow V9, not V1.
mapfile -t migrations < <(printf '%s\n' queue-core/src/main/resources/io/workrow/queue/migration/V*.sql | sort -V)
[ -f "${migrations[0]}" ] || { echo "no migrations found from $(pwd)" >&2; exit 1; }
for migration in "${migrations[@]}"; do
    version=$(basename "$migration" | sed -E 's/^V([0-9]+)__.*/\1/')
    if [ -n "${upto:-}" ] && [ "$version" -gt "$upto" ]; then continue; fi
    # One transaction per file, as Flyway applies them: V13 keeps its search path for its transaction.
    psql_db -1 -f "$migration" >/dev/null
done

source "$(dirname "${BASH_SOURCE[0]}")/workrow-claim.sh"

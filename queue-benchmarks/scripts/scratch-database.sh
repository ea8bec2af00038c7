# Sourced by the scripts beside it: a scratch database named $db with Workrow's migrations applied,
# dropped again on exit, psql_db to run SQL in it, and claim_statement, Workrow's claim.
# Connection: PGHOST, PGPORT, PGUSER (defaults 127.0.0.1, 5432, postgres), trust authentication.
host=${PGHOST:-127.0.0.1} port=${PGPORT:-5432} user=${PGUSER:-postgres}
psql_db() { psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -v ON_ERROR_STOP=1 "$@"; }

psql -h "$host" -p "$port" -U "$user" -d postgres -q -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql -h "$host" -p "$port" -U "$user" -d postgres -q -c "DROP DATABASE IF EXISTS $db"' EXIT
# In version order: V10 must follow V9, not V1.
mapfile -t migrations < <(printf '%s\n' queue-core/src/main/resources/io/workrow/queue/migration/V*.sql | sort -V)
[ -f "${migrations[0]}" ] || { echo "no migrations found from $(pwd)" >&2; exit 1; }
for migration in "${migrations[@]}"; do
    psql_db -f "$migration"
done

# Workrow's claim (JobSql.JOB_CLAIM) of $batch jobs of queue bench, returning $1.
claim_statement() {
    echo "WITH open AS (
              SELECT NOT EXISTS (SELECT 1 FROM workrow_queue_pause WHERE queue = 'bench')
                     AND NOT EXISTS (SELECT 1 FROM workrow_breaker WHERE queue = 'bench' AND state <> 'closed') AS open
          ), unkeyed AS (
              SELECT id, priority, run_at FROM workrow_job
              WHERE queue = 'bench' AND status = 'pending' AND partition_key IS NULL AND fairness_key = ''
                AND run_at <= now() AND (SELECT open FROM open)
              ORDER BY priority, run_at, id LIMIT $batch FOR UPDATE SKIP LOCKED
          ), keyed AS (
              SELECT id, priority, run_at FROM workrow_job
              WHERE queue = 'bench' AND status = 'pending' AND (partition_key IS NOT NULL OR fairness_key <> '')
                AND run_at <= now() AND (SELECT open FROM open)
              ORDER BY priority, run_at, id LIMIT $batch FOR UPDATE SKIP LOCKED
          ), due AS (
              SELECT id FROM (SELECT * FROM unkeyed UNION ALL SELECT * FROM keyed) AS candidate
              ORDER BY priority, run_at, id LIMIT $batch
          )
          UPDATE workrow_job AS job
          SET status = 'running', claimed_by = 'worker-1', lease_token = nextval('workrow_lease_token_seq'),
              lease_expires_at = now() + interval '5 minutes', attempts = job.attempts + 1, ordered_key = NULL,
              started_at = now(), updated_at = now()
          FROM due WHERE job.id = due.id
          RETURNING $1"
}

#!/usr/bin/env bash
# Storage layouts measured at the SQL level, before one is built into the engine. For each
# candidate, in turns and in a fresh scratch database each time: CLIENTS pgbench clients enqueue
# JOBS jobs in batches of BATCH, then drain them (claim BATCH, then end them: two statements, each
# its own transaction, as the runtime runs them), over the prepared protocol. Per job ended:
#
#   drain us       database CPU of the drain: user and system time of the postmaster and all its
#                  children, the pgbench connections' backends included, pgbench itself not
#   +vacuum us     the same with a VACUUM of what the drain left behind (autovacuum's work, done at once)
#   enqueue us     database CPU of the enqueue, with its VACUUM ANALYZE
#   WAL            records, bytes and full-page images of the drain (pg_stat_wal)
#   HOT            updates per job, and the share of them that were HOT (pg_stat_user_tables; -1
#                  when there were none)
#   jobs/s         jobs ended per second of the drain's wall time (8 clients on this machine's cores)
#
# Candidates:
#   W0  today's layout (Workrow's migrations): Workrow's claim (scratch-database.sh) and
#       JOB_COMPLETE_MANY (locks the batch's rows with SKIP LOCKED, then updates them to completed)
#   W1  today's layout, ended without the explicit row lock (the UPDATE's WHERE is the fence)
#   G   graphile-worker 0.17's shape: an is_available generated column under a partial index, the
#       claim sets locked_at and locked_by, the end deletes the row
#   A   a job row written once and never updated; a narrow ready table that claims delete from;
#       one claim row per claimed batch (the lease and the fence: ending deletes it); one outcome
#       row per job appended to a log partitioned by finished_at, with BRIN indexes
#   A1  A with one outcome row per ended batch (its ids in an array; per-job rows would be kept
#       for failures only)
#   A2  A as docs/storage-layout.md designs it: the claim row keeps a bit per job (settled), an end
#       sends (token, position, id) per job, locks its claim rows, accepts only positions still
#       open, sets their bits or deletes the claim row with its last open position, and appends
#       the accepted jobs' outcome rows; ready rows are indexed by id too (READY_ID_INDEX, BRIN
#       unless told), as a lookup, a cancel and the workrow_job view need. The end sends each job's id and attempt, as the runtime
#       knows them, so the claim row's TOASTed arrays are never read by an end, and finds its
#       claim rows by their tokens (an array, as the runtime sends them): a first version that read
#       ids[position] per job and joined the claim table to the input, so that it was scanned
#       whole with every dead claim row in it, cost 3.3x A
#   A3  A2 with the claim row's own UPDATE as the fence: the statement sets the settled bits and
#       records which of them it newly set (accepted: the SET sees the row as it was), so no
#       separate row lock is taken; a claim row with every position settled is deleted by a
#       second statement after the claim's last end (the runtime knows which end is last)
#   B   one row per job, fill factor 50: the claim is a non-HOT update (it leaves the claim
#       index's predicate), the end a HOT one (nothing it changes is indexed or in a predicate)
#
# Kill criteria, set before the first run. The issue's target is database CPU per job at most
# 0.8x graphile-worker's; the harness measured W0 at 21 and G at 12 us per job, a ratio of 0.58.
#   - Calibration: G/W0 (drain with vacuum) between 0.45 and 0.70, else the method is not
#     measuring what the harness measured and no candidate is judged.
#   - A candidate whose drain with vacuum costs more than 0.8x G's in the same round cannot meet
#     the target: rejected.
#   - B is rejected if fewer than 95 % of its ends are HOT (ends are half its updates).
#   - A1 is preferred to A only if it saves at least 1 us per job.
#   - A2 is the design to build unless it costs more than 1 us per job above A (the settled
#     bits' price), or its claim row updates are not HOT. A3 replaces it if it costs less.
#
#   [JOBS=200000] [BATCH=500] [CLIENTS=8] [ROUNDS=3] [ENDS=1] [READY_ID_INDEX=brin|btree|none] \
#       queue-benchmarks/scripts/layout-candidates.sh [W0 G A ...]
#
# ENDS splits the end of each claimed batch into that many statements, in order, as the runtime's
# result writer ends jobs in batches of its own rather than a claim's at once.
#
# Needs psql and pgbench on PATH, a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER;
# defaults 127.0.0.1, 5432, postgres) and read access to its postmaster.pid and /proc (run it on
# the database's machine as root or as the server's user).
set -euo pipefail
cd "$(dirname "$0")/../.."
source queue-benchmarks/scripts/workrow-claim.sh

jobs=${JOBS:-200000}
batch=${BATCH:-500}
clients=${CLIENTS:-8}
rounds=${ROUNDS:-3}
ends=${ENDS:-1}
ready_id_index=${READY_ID_INDEX:-brin}
case $ready_id_index in brin | btree | none) ;; *) echo "READY_ID_INDEX must be brin, btree or none" >&2; exit 2 ;; esac
candidates=("$@")
[ ${#candidates[@]} -gt 0 ] || candidates=(W0 W1 G A A1 A2 B)
if [ $((jobs % (batch * clients))) -ne 0 ]; then
    echo "JOBS=$jobs must be a multiple of BATCH x CLIENTS = $((batch * clients))" >&2
    exit 2
fi
per_client=$((jobs / batch / clients))

host=${PGHOST:-127.0.0.1} port=${PGPORT:-5432} user=${PGUSER:-postgres}
db=workrow_layout_candidates
psql_db() { psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -v ON_ERROR_STOP=1 "$@"; }
psql_admin() { psql -h "$host" -p "$port" -U "$user" -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
trap 'psql_admin -c "DROP DATABASE IF EXISTS $db" 2>/dev/null || true; rm -rf "$work"' EXIT
work=$(mktemp -d)

data_directory=$(psql_admin -c "SHOW data_directory")
postmaster=$(head -1 "$data_directory/postmaster.pid")
ticks_per_second=$(getconf CLK_TCK)

# CPU ticks the server has used: the postmaster's own and its reaped children's (cutime,
# cstime), and every live child's. Sampled before and after a phase, the difference counts each
# backend once whether it ended during the phase or not.
server_ticks() {
    local fields total child
    read -r -a fields < <(sed 's/^.*) //' "/proc/$postmaster/stat")
    total=$((fields[11] + fields[12] + fields[13] + fields[14]))
    for child in $(pgrep -P "$postmaster"); do
        if read -r -a fields < <(sed 's/^.*) //' "/proc/$child/stat" 2>/dev/null); then
            total=$((total + fields[11] + fields[12]))
        fi
    done
    echo "$total"
}

# WAL records, bytes, full-page images; updates and HOT updates of the candidate's tables.
counters() {
    psql_db -F ' ' -c "SELECT wal_records, wal_bytes, wal_fpi FROM pg_stat_wal" \
        -c "SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables" | tr '\n' ' '
}

# ---- the candidates: schema, enqueue and drain (pgbench scripts), and how many jobs have ended

payload="jsonb_build_object('n', n, 't', 1763938000123.5)"

schema() {
    case $1 in
    W0 | W1)
        # The one-row-per-job layout: Workrow's migrations up to version 12.
        mapfile -t migrations < <(printf '%s\n' queue-core/src/main/resources/io/workrow/queue/migration/V*.sql | sort -V)
        for migration in "${migrations[@]}"; do
            [[ $(basename "$migration") =~ ^V([0-9]+)__ ]] && [ "${BASH_REMATCH[1]}" -le 12 ] || continue
            cat "$migration"; echo
        done ;;
    G)
        cat <<'SQL'
CREATE TABLE jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_queue_id integer,
    task_identifier text NOT NULL,
    payload json NOT NULL DEFAULT '{}',
    priority smallint NOT NULL DEFAULT 0,
    run_at timestamptz NOT NULL DEFAULT now(),
    attempts smallint NOT NULL DEFAULT 0,
    max_attempts smallint NOT NULL DEFAULT 25,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    key text UNIQUE,
    locked_at timestamptz,
    locked_by text,
    revision integer NOT NULL DEFAULT 0,
    flags jsonb,
    is_available boolean GENERATED ALWAYS AS ((locked_at IS NULL) AND (attempts < max_attempts)) STORED NOT NULL
);
CREATE INDEX jobs_main_index ON jobs (priority, run_at) INCLUDE (id, task_identifier, job_queue_id)
    WHERE is_available = true;
SQL
        ;;
    A | A1 | A2 | A3)
        cat <<'SQL'
CREATE TABLE job (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue text NOT NULL,
    priority smallint NOT NULL DEFAULT 0,
    payload jsonb NOT NULL,
    headers jsonb NOT NULL DEFAULT '{}',
    max_attempts integer NOT NULL DEFAULT 5,
    run_at timestamptz NOT NULL DEFAULT now(),
    partition_key text,
    fairness_key text NOT NULL DEFAULT '',
    idempotency_key text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX job_idempotency_idx ON job (queue, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE TABLE ready (
    queue text NOT NULL,
    priority smallint NOT NULL,
    run_at timestamptz NOT NULL,
    id bigint NOT NULL,
    attempt integer NOT NULL DEFAULT 0
);
CREATE INDEX ready_claim_idx ON ready (queue, priority, run_at, id);
CREATE SEQUENCE claim_token_seq;
CREATE TABLE claim (
    token bigint PRIMARY KEY,
    queue text NOT NULL,
    worker text NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    ids bigint[] NOT NULL,
    attempts integer[] NOT NULL,
    dropped bigint[] NOT NULL DEFAULT '{}',
    open integer NOT NULL
);
CREATE TABLE claim_bits (
    token bigint PRIMARY KEY,
    queue text NOT NULL,
    worker text NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    ids bigint[] NOT NULL,
    attempts integer[] NOT NULL,
    settled varbit NOT NULL,
    dropped varbit NOT NULL,
    accepted varbit
);
CREATE TABLE outcome (
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    claim_token bigint NOT NULL,
    queue text NOT NULL,
    status text NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    worker text,
    error text
) PARTITION BY RANGE (finished_at);
CREATE INDEX outcome_finished_idx ON outcome USING brin (finished_at);
CREATE INDEX outcome_job_idx ON outcome USING brin (job_id);
CREATE INDEX outcome_dead_idx ON outcome (queue, finished_at) WHERE status = 'dead';
CREATE TABLE outcome_batch (
    claim_token bigint NOT NULL,
    queue text NOT NULL,
    status text NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    worker text,
    ids bigint[] NOT NULL,
    attempts integer[] NOT NULL
) PARTITION BY RANGE (finished_at);
CREATE INDEX outcome_batch_finished_idx ON outcome_batch USING brin (finished_at);
CREATE INDEX outcome_batch_token_idx ON outcome_batch USING brin (claim_token);
DO $$
BEGIN
    EXECUTE format('CREATE TABLE outcome_today PARTITION OF outcome FOR VALUES FROM (%L) TO (%L)',
                   date_trunc('day', now()) - interval '1 day', date_trunc('day', now()) + interval '2 days');
    EXECUTE format('CREATE TABLE outcome_batch_today PARTITION OF outcome_batch FOR VALUES FROM (%L) TO (%L)',
                   date_trunc('day', now()) - interval '1 day', date_trunc('day', now()) + interval '2 days');
END $$;
SQL
        # As designed, A2 finds a waiting job by id (lookups, cancel, the workrow_job view).
        if [ "$1" = A2 ] && [ "$ready_id_index" != none ]; then
            echo "CREATE INDEX ready_id_idx ON ready USING $ready_id_index (id);"
        fi ;;
    B)
        cat <<'SQL'
CREATE SEQUENCE lease_token_seq;
CREATE TABLE job (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue text NOT NULL,
    priority smallint NOT NULL DEFAULT 0,
    payload jsonb NOT NULL,
    headers jsonb NOT NULL DEFAULT '{}',
    run_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 5,
    claimable boolean NOT NULL DEFAULT true,
    status text NOT NULL DEFAULT 'pending',
    claimed_by text,
    lease_token bigint,
    lease_expires_at timestamptz,
    started_at timestamptz,
    finished_at timestamptz,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);
CREATE INDEX job_claim_idx ON job (queue, priority, run_at, id) WHERE claimable;
CREATE INDEX job_lease_idx ON job (lease_expires_at) WHERE NOT claimable;
SQL
        ;;
    esac
}

enqueue() {
    case $1 in
    W0 | W1) echo "INSERT INTO workrow_job (queue, partition_bucket, payload, max_attempts)
                   SELECT 'bench', 0, $payload, 5 FROM generate_series(1, :batch) AS n;" ;;
    G) echo "INSERT INTO jobs (task_identifier, payload)
             SELECT 'bench', $payload::json FROM generate_series(1, :batch) AS n;" ;;
    A | A1 | A2 | A3) echo "WITH added AS (
                      INSERT INTO job (queue, payload) SELECT 'bench', $payload FROM generate_series(1, :batch) AS n
                      RETURNING queue, priority, run_at, id)
                  INSERT INTO ready (queue, priority, run_at, id) SELECT queue, priority, run_at, id FROM added;" ;;
    B) echo "INSERT INTO job (queue, payload) SELECT 'bench', $payload FROM generate_series(1, :batch) AS n;" ;;
    esac
}

# The claim of $1, which \gsets ids and tokens (or, for A and A1, the claim's token).
claim() {
    case $1 in
    W0 | W1)
        echo "WITH claimed AS ($(claim_statement "job.id, job.lease_token, job.payload::text AS payload"))
              SELECT coalesce(array_agg(id), '{}')::text AS ids, coalesce(array_agg(lease_token), '{}')::text AS tokens,
                     coalesce(sum(length(payload)), 0) AS bytes FROM claimed" ;;
    G)
        echo "WITH picked AS (SELECT id FROM jobs WHERE is_available = true AND run_at <= now() AND task_identifier = 'bench'
                              ORDER BY priority, run_at LIMIT :batch FOR UPDATE SKIP LOCKED),
                   claimed AS (UPDATE jobs SET attempts = jobs.attempts + 1, locked_by = 'worker-1', locked_at = now()
                               FROM picked WHERE jobs.id = picked.id RETURNING jobs.id, jobs.payload::text AS payload)
              SELECT coalesce(array_agg(id), '{}')::text AS ids, coalesce(sum(length(payload)), 0) AS bytes FROM claimed" ;;
    A | A1)
        echo "WITH picked AS (SELECT ctid AS row, id FROM ready WHERE queue = 'bench' AND run_at <= now()
                              ORDER BY priority, run_at, id LIMIT :batch FOR UPDATE SKIP LOCKED),
                   taken AS (DELETE FROM ready USING picked WHERE ready.ctid = picked.row RETURNING ready.id, ready.attempt),
                   claimed AS (INSERT INTO claim (token, queue, worker, lease_expires_at, ids, attempts, open)
                               SELECT nextval('claim_token_seq'), 'bench', 'worker-1', now() + interval '5 minutes',
                                      array_agg(id ORDER BY id), array_agg(attempt + 1 ORDER BY id), count(*)
                               FROM taken HAVING count(*) > 0
                               RETURNING token, ids)
              SELECT coalesce(max(claimed.token), 0) AS token, coalesce(sum(length(job.payload::text)), 0) AS bytes
              FROM claimed CROSS JOIN LATERAL unnest(claimed.ids) AS held(id) JOIN job ON job.id = held.id" ;;
    A2 | A3)
        echo "WITH picked AS (SELECT ctid AS row, id FROM ready WHERE queue = 'bench' AND run_at <= now()
                              ORDER BY priority, run_at, id LIMIT :batch FOR UPDATE SKIP LOCKED),
                   taken AS (DELETE FROM ready USING picked WHERE ready.ctid = picked.row RETURNING ready.id, ready.attempt),
                   claimed AS (INSERT INTO claim_bits (token, queue, worker, lease_expires_at, ids, attempts, settled, dropped)
                               SELECT nextval('claim_token_seq'), 'bench', 'worker-1', now() + interval '5 minutes',
                                      array_agg(id ORDER BY id), array_agg(attempt + 1 ORDER BY id),
                                      repeat('0', count(*)::int)::varbit, repeat('0', count(*)::int)::varbit
                               FROM taken HAVING count(*) > 0
                               RETURNING token, ids, attempts)
              SELECT coalesce(claimed.token, 0) AS token, coalesce(claimed.ids::text, '{}') AS ids,
                     coalesce(claimed.attempts::text, '{}') AS attempts,
                     (SELECT coalesce(sum(length(job.payload::text)), 0) FROM unnest(claimed.ids) AS held(id)
                      JOIN job ON job.id = held.id) AS bytes
              FROM (VALUES (1)) AS one LEFT JOIN claimed ON true" ;;
    B)
        echo "WITH picked AS (SELECT id FROM job WHERE queue = 'bench' AND claimable AND run_at <= now()
                              ORDER BY priority, run_at, id LIMIT :batch FOR UPDATE SKIP LOCKED),
                   claimed AS (UPDATE job SET claimable = false, status = 'running', claimed_by = 'worker-1',
                                              lease_token = nextval('lease_token_seq'),
                                              lease_expires_at = now() + interval '5 minutes',
                                              attempts = job.attempts + 1, started_at = now()
                               FROM picked WHERE job.id = picked.id
                               RETURNING job.id, job.lease_token, job.payload::text AS payload)
              SELECT coalesce(array_agg(id), '{}')::text AS ids, coalesce(array_agg(lease_token), '{}')::text AS tokens,
                     coalesce(sum(length(payload)), 0) AS bytes FROM claimed" ;;
    esac
}

# The end of the claimed jobs $2 to $3 (1-based positions in the claim) in candidate $1; $4 is
# "last" for the claim's last end. For A and A1 the claim row is the fence: each end but the last
# takes its jobs off it (a HOT update: nothing on it is indexed but its token), the last deletes it.
end_slice() {
    local ids="(:ids::bigint[])[$2:$3]" tokens="(:tokens::bigint[])[$2:$3]"
    local completed="status = 'completed', finished_at = clock_timestamp(), updated_at = clock_timestamp(),
                     lease_expires_at = NULL, lease_token = NULL"
    local fence="UPDATE claim SET open = open - ($3 - $2 + 1) WHERE token = :token"
    [ "${4:-}" = last ] && fence="DELETE FROM claim WHERE token = :token"
    case $1 in
    W0) echo "WITH held AS (SELECT job.id FROM unnest($ids, $tokens) AS done(id, token)
                            JOIN workrow_job AS job ON job.id = done.id AND job.lease_token = done.token
                            FOR UPDATE OF job SKIP LOCKED)
              UPDATE workrow_job AS job SET $completed FROM held WHERE job.id = held.id;" ;;
    W1) echo "UPDATE workrow_job AS job SET $completed FROM unnest($ids, $tokens) AS done(id, token)
              WHERE job.id = done.id AND job.lease_token = done.token;" ;;
    G) echo "DELETE FROM jobs WHERE id = ANY($ids) AND locked_by = 'worker-1';" ;;
    A) echo "WITH ended AS ($fence RETURNING token, queue, worker, ids[$2:$3] AS ids, attempts[$2:$3] AS attempts)
             INSERT INTO outcome (job_id, attempt, claim_token, queue, status, worker)
             SELECT each.id, each.attempt, ended.token, ended.queue, 'completed', ended.worker
             FROM ended CROSS JOIN LATERAL unnest(ended.ids, ended.attempts) AS each(id, attempt);" ;;
    A1) echo "WITH ended AS ($fence RETURNING token, queue, worker, ids[$2:$3] AS ids, attempts[$2:$3] AS attempts)
              INSERT INTO outcome_batch (claim_token, queue, status, worker, ids, attempts)
              SELECT token, queue, 'completed', worker, ids, attempts FROM ended WHERE cardinality(ids) > 0;" ;;
    A2) echo "WITH input AS (SELECT :token::bigint AS token, ($2 - 1 + each.n)::int AS position, each.id, each.attempt
                             FROM unnest((:ids::bigint[])[$2:$3], (:attempts::int[])[$2:$3])
                                  WITH ORDINALITY AS each(id, attempt, n)),
                   held AS (SELECT token, queue, worker, settled, dropped FROM claim_bits
                            WHERE token = ANY(ARRAY[:token::bigint]) FOR UPDATE),
                   accepted AS (SELECT input.token, input.position, input.id, input.attempt, held.queue, held.worker,
                                       set_bit(held.settled # held.settled, input.position - 1, 1) AS mask
                                FROM input JOIN held ON held.token = input.token
                                WHERE get_bit(held.settled, input.position - 1) = 0
                                  AND get_bit(held.dropped, input.position - 1) = 0),
                   marks AS (SELECT token, bit_or(mask) AS mask FROM accepted GROUP BY token),
                   kept AS (UPDATE claim_bits SET settled = claim_bits.settled | marks.mask FROM marks
                            WHERE claim_bits.token = marks.token
                              AND strpos((claim_bits.settled | marks.mask | claim_bits.dropped)::text, '0') > 0),
                   closed AS (DELETE FROM claim_bits USING marks
                              WHERE claim_bits.token = marks.token
                                AND strpos((claim_bits.settled | marks.mask | claim_bits.dropped)::text, '0') = 0)
              INSERT INTO outcome (job_id, attempt, claim_token, queue, status, worker)
              SELECT id, attempt, token, queue, 'completed', worker FROM accepted;" ;;
    A3) echo "WITH input AS (SELECT :token::bigint AS token, ($2 - 1 + each.n)::int AS position, each.id, each.attempt
                             FROM unnest((:ids::bigint[])[$2:$3], (:attempts::int[])[$2:$3])
                                  WITH ORDINALITY AS each(id, attempt, n)),
                   masks AS (SELECT token, bit_or(set_bit(repeat('0', :batch)::varbit, position - 1, 1)) AS mask
                             FROM input GROUP BY token),
                   ended AS (UPDATE claim_bits SET settled = claim_bits.settled | (masks.mask & ~claim_bits.dropped),
                                                   accepted = masks.mask & ~claim_bits.settled & ~claim_bits.dropped
                             FROM masks WHERE claim_bits.token = masks.token
                             RETURNING claim_bits.token, claim_bits.accepted, claim_bits.queue, claim_bits.worker)
              INSERT INTO outcome (job_id, attempt, claim_token, queue, status, worker)
              SELECT input.id, input.attempt, ended.token, ended.queue, 'completed', ended.worker
              FROM input JOIN ended ON ended.token = input.token WHERE get_bit(ended.accepted, input.position - 1) = 1;"
        if [ "${4:-}" = last ]; then
            echo "DELETE FROM claim_bits WHERE token = :token AND strpos((settled | dropped)::text, '0') = 0;"
        fi ;;
    B) echo "UPDATE job SET status = 'completed', finished_at = clock_timestamp(), lease_token = NULL
             FROM unnest($ids, $tokens) AS done(id, token)
             WHERE job.id = done.id AND job.lease_token = done.token;" ;;
    esac
}

# One client's round: a claim, then its jobs ended in $ends statements.
drain() {
    claim "$1"
    echo '\gset'
    local part=$((batch / ends)) k
    for ((k = 0; k < ends; k++)); do
        end_slice "$1" $((k * part + 1)) $((k == ends - 1 ? batch : (k + 1) * part)) $([ $k -eq $((ends - 1)) ] && echo last)
    done
}

ended() {
    case $1 in
    W0 | W1) echo "SELECT count(*) FROM workrow_job WHERE status = 'completed'" ;;
    G) echo "SELECT $jobs - count(*) FROM jobs" ;;
    A | A2 | A3) echo "SELECT count(*) FROM outcome" ;;
    A1) echo "SELECT coalesce(sum(cardinality(ids)), 0) FROM outcome_batch" ;;
    B) echo "SELECT count(*) FROM job WHERE status = 'completed'" ;;
    esac
}

# Runs pgbench script $2 for phase $1 and prints its wall seconds.
run_clients() {
    local started ended_at
    started=$(date +%s.%N)
    pgbench -h "$host" -p "$port" -U "$user" -n -M prepared -c "$clients" -j 2 -t "$per_client" -D batch="$batch" \
        -f "$2" "$db" > "$work/$1.log" 2>&1 || { cat "$work/$1.log" >&2; exit 1; }
    ended_at=$(date +%s.%N)
    sleep 1 # let the backends exit, flush their statistics and be reaped
    echo "$ended_at - $started" | bc -l
}

us_per_job() { echo "scale=2; ($2 - $1) * 1000000 / $ticks_per_second / $3" | bc -l; }

measure() {
    local candidate=$1 round=$2 t0 t1 t2 t3 t4 t5 c0 c1 wall ended_jobs
    psql_admin -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    schema "$candidate" | psql_db > /dev/null
    enqueue "$candidate" > "$work/enqueue.sql"
    drain "$candidate" > "$work/drain.sql"

    t0=$(server_ticks)
    run_clients enqueue "$work/enqueue.sql" > /dev/null
    psql_db -c "VACUUM ANALYZE"
    t1=$(server_ticks)
    psql_db -c "CHECKPOINT"

    read -r -a c0 <<< "$(counters)"
    t2=$(server_ticks)
    wall=$(run_clients drain "$work/drain.sql")
    t3=$(server_ticks)
    read -r -a c1 <<< "$(counters)"
    psql_db -c "VACUUM"
    t4=$(server_ticks)

    ended_jobs=$(psql_db -c "$(ended "$candidate")")
    [ "$ended_jobs" -gt 0 ] || { echo "$candidate ended no job" >&2; cat "$work/drain.log" >&2; exit 1; }
    printf '%s %s %s %s %s %s %s %s %s %s %s\n' "$candidate" "$round" \
        "$(us_per_job "$t2" "$t3" "$ended_jobs")" "$(us_per_job "$t2" "$t4" "$ended_jobs")" \
        "$(us_per_job "$t0" "$t1" "$jobs")" \
        "$(echo "scale=2; (${c1[0]} - ${c0[0]}) / $ended_jobs" | bc -l)" \
        "$(echo "scale=0; (${c1[1]} - ${c0[1]}) / $ended_jobs" | bc -l)" \
        "$(echo "scale=3; (${c1[2]} - ${c0[2]}) / $ended_jobs" | bc -l)" \
        "$(echo "scale=2; (${c1[3]} - ${c0[3]}) / $ended_jobs" | bc -l)" \
        "$(echo "scale=4; u = ${c1[3]} - ${c0[3]}; if (u > 0) 100 * (${c1[4]} - ${c0[4]}) / u else -1" | bc -l)" \
        "$(echo "scale=0; $ended_jobs / $wall" | bc -l) $ended_jobs"
}

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
echo "PostgreSQL $(psql_admin -c 'SHOW server_version'), shared_buffers $(psql_admin -c 'SHOW shared_buffers'),"\
     "autovacuum $(psql_admin -c 'SHOW autovacuum'), $(nproc) cores; $jobs jobs, claims of $batch ended in $ends statements,"\
     "$clients clients, $rounds rounds, A2's ready id index: $ready_id_index"
results="$work/results"
for round in $(seq 1 "$rounds"); do
    order=("${candidates[@]}")
    if [ $((round % 2)) -eq 0 ]; then # every other round backwards, so that no candidate always runs first
        for ((i = ${#candidates[@]} - 1, j = 0; i >= 0; i--, j++)); do order[j]=${candidates[i]}; done
    fi
    for candidate in "${order[@]}"; do
        measure "$candidate" "$round" | tee -a "$results" | sed 's/^/  /'
    done
done

echo
echo "| candidate | drain us/job | drain + vacuum us/job | enqueue us/job | WAL records/job | WAL bytes/job | FPI/job | updates/job | HOT % of updates | jobs/s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for candidate in "${candidates[@]}"; do
    awk -v c="$candidate" '$1 == c' "$results" | awk '
        { for (f = 3; f <= 11; f++) v[f, NR] = $f; n = NR; name = $1 }
        END {
            printf "| %s |", name
            for (f = 3; f <= 11; f++) {
                for (i = 1; i <= n; i++) s[i] = v[f, i] + 0
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) { x = s[i]; s[i] = s[j]; s[j] = x }
                median = n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
                printf " %s |", median
            }
            printf "\n"
        }'
done
echo "(medians of $rounds rounds; each round's figures above: candidate, round, then the columns in this order, and the jobs ended)"

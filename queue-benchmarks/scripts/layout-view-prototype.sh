#!/usr/bin/env bash
# A prototype of the workrow_job view over the next storage layout (docs/storage-layout.md): job
# data partitioned by id, the ready, scheduled, claim and dead tables, and the outcome log in daily
# partitions, holding 10^6 jobs (900,000 completed over three days, 50,000 ready, 30,000
# scheduled, 1,000 running in two claims, 19,000 dead). Prints the execution time of the reads
# runbooks make through the view: one job by id in each state, one queue's dead jobs, and a count
# of every job by status.
#
#   queue-benchmarks/scripts/layout-view-prototype.sh
#
# Needs psql and a local PostgreSQL that trusts the user (PGHOST, PGPORT, PGUSER; defaults
# 127.0.0.1, 5432, postgres). Makes and drops a scratch database.
set -euo pipefail
host=${PGHOST:-127.0.0.1} port=${PGPORT:-5432} user=${PGUSER:-postgres}
db=workrow_layout_view
psql_admin() { psql -h "$host" -p "$port" -U "$user" -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
trap 'psql_admin -c "DROP DATABASE IF EXISTS $db" 2>/dev/null || true' EXIT
psql_admin -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE job_data (id bigint NOT NULL, queue text NOT NULL, priority smallint NOT NULL DEFAULT 0, payload jsonb NOT NULL,
  max_attempts int NOT NULL DEFAULT 5, partition_key text, created_at timestamptz NOT NULL DEFAULT now()) PARTITION BY RANGE (id);
CREATE TABLE job_data_p1 PARTITION OF job_data FOR VALUES FROM (1) TO (400001);
CREATE TABLE job_data_p2 PARTITION OF job_data FOR VALUES FROM (400001) TO (800001);
CREATE TABLE job_data_p3 PARTITION OF job_data FOR VALUES FROM (800001) TO (1200001);
CREATE TABLE job_data_default PARTITION OF job_data DEFAULT;
ALTER TABLE job_data ADD PRIMARY KEY (id);
CREATE TABLE ready (queue text NOT NULL, priority smallint NOT NULL, run_at timestamptz NOT NULL, id bigint NOT NULL, attempt int NOT NULL DEFAULT 0, last_error text);
CREATE INDEX ready_claim_idx ON ready (queue, priority, run_at, id);
CREATE TABLE scheduled (queue text NOT NULL, priority smallint NOT NULL, run_at timestamptz NOT NULL, id bigint NOT NULL, attempt int NOT NULL DEFAULT 0, last_error text);
CREATE INDEX scheduled_run_at_idx ON scheduled (run_at);
CREATE INDEX scheduled_queue_idx ON scheduled (queue);
CREATE TABLE claim (token bigint PRIMARY KEY, queue text NOT NULL, worker text NOT NULL, lease_expires_at timestamptz NOT NULL, started_at timestamptz NOT NULL,
  ids bigint[] NOT NULL, attempts int[] NOT NULL, settled varbit NOT NULL, dropped varbit NOT NULL) WITH (fillfactor = 50);
CREATE TABLE dead (id bigint PRIMARY KEY, queue text NOT NULL, attempts int NOT NULL, last_error text, claimed_by text, finished_at timestamptz NOT NULL);
CREATE INDEX dead_queue_idx ON dead (queue, finished_at);
CREATE TABLE outcome (job_id bigint NOT NULL, attempt int NOT NULL, claim_token bigint NOT NULL, queue text NOT NULL, status text NOT NULL,
  worker text, started_at timestamptz, finished_at timestamptz NOT NULL, error text) PARTITION BY RANGE (finished_at);
CREATE TABLE outcome_d1 PARTITION OF outcome FOR VALUES FROM ('2026-11-24') TO ('2026-11-25');
CREATE TABLE outcome_d2 PARTITION OF outcome FOR VALUES FROM ('2026-11-25') TO ('2026-11-26');
CREATE TABLE outcome_d3 PARTITION OF outcome FOR VALUES FROM ('2026-11-26') TO ('2026-11-28');
CREATE TABLE outcome_default PARTITION OF outcome DEFAULT;
CREATE INDEX outcome_finished_idx ON outcome USING brin (finished_at);
CREATE INDEX outcome_job_brin ON outcome USING brin (job_id);
CREATE INDEX outcome_job_failed_idx ON outcome (job_id) WHERE status <> 'completed';
-- 1,000,000 jobs: 900,000 completed over three days, 50,000 ready, 30,000 scheduled, 1,000 running in 2 claims, 19,000 dead
INSERT INTO job_data (id, queue, payload, created_at) SELECT n, 'q' || (n % 4), jsonb_build_object('n', n), '2026-11-24'::timestamptz + n * interval '200 ms' FROM generate_series(1, 1000000) n;
INSERT INTO outcome SELECT n, 1, n / 500, 'q' || (n % 4), 'completed', 'w', '2026-11-24'::timestamptz + n * interval '200 ms', '2026-11-24'::timestamptz + n * interval '200 ms' + interval '1 s', NULL FROM generate_series(1, 900000) n;
INSERT INTO ready SELECT 'q' || (n % 4), 0, now(), n, 0, NULL FROM generate_series(900001, 950000) n;
INSERT INTO scheduled SELECT 'q' || (n % 4), 0, now() + interval '1 day', n, 1, 'boom' FROM generate_series(950001, 980000) n;
INSERT INTO claim SELECT 1, 'q1', 'w1', now() + interval '5 min', now(), array_agg(n ORDER BY n), array_agg(1), repeat('0', 500)::varbit, repeat('0', 500)::varbit FROM generate_series(980001, 980500) n;
INSERT INTO claim SELECT 2, 'q2', 'w2', now() + interval '5 min', now(), array_agg(n ORDER BY n), array_agg(1), repeat('0', 500)::varbit, repeat('0', 500)::varbit FROM generate_series(980501, 981000) n;
INSERT INTO dead SELECT n, 'q' || (n % 4), 5, 'kaput', 'w', now() FROM generate_series(981001, 1000000) n;
CREATE INDEX ready_id_idx ON ready USING brin (id);
CREATE INDEX scheduled_id_idx ON scheduled USING brin (id);
CREATE VIEW workrow_job AS
  SELECT d.id, s.queue, 'scheduled'::text AS status, s.attempt AS attempts, d.max_attempts, s.run_at, d.payload, s.last_error,
         NULL::text AS claimed_by, d.created_at, NULL::timestamptz AS started_at, NULL::timestamptz AS finished_at
  FROM scheduled s JOIN job_data d ON d.id = s.id
  UNION ALL
  SELECT d.id, r.queue, 'pending', r.attempt, d.max_attempts, r.run_at, d.payload, r.last_error, NULL, d.created_at, NULL, NULL
  FROM ready r JOIN job_data d ON d.id = r.id
  UNION ALL
  SELECT d.id, c.queue, 'running', h.attempt, d.max_attempts, NULL, d.payload,
         (SELECT o.error FROM outcome o WHERE o.job_id = h.id AND o.status <> 'completed' ORDER BY o.attempt DESC LIMIT 1),
         c.worker, d.created_at, c.started_at, NULL
  FROM claim c CROSS JOIN LATERAL unnest(c.ids, c.attempts) WITH ORDINALITY AS h(id, attempt, position)
  JOIN job_data d ON d.id = h.id
  WHERE get_bit(c.settled, h.position::int - 1) = 0 AND get_bit(c.dropped, h.position::int - 1) = 0
  UNION ALL
  SELECT d.id, x.queue, 'dead', x.attempts, d.max_attempts, NULL, d.payload, x.last_error, x.claimed_by, d.created_at, NULL, x.finished_at
  FROM dead x JOIN job_data d ON d.id = x.id
  UNION ALL
  SELECT d.id, o.queue, o.status, o.attempt, d.max_attempts, NULL, d.payload, o.error, o.worker, d.created_at, o.started_at, o.finished_at
  FROM outcome o JOIN job_data d ON d.id = o.job_id
  WHERE o.status IN ('completed', 'cancelled');
VACUUM ANALYZE;
SQL

read_time() {
    local what=$1 query=$2
    printf '%-34s %s\n' "$what" "$(psql -h "$host" -p "$port" -U "$user" -d "$db" -qAt -v ON_ERROR_STOP=1 \
        -c "EXPLAIN (ANALYZE, COSTS OFF) $query" | sed -n 's/^Execution Time: //p')"
}
read_time "one job by id, completed" "SELECT * FROM workrow_job WHERE id = 500000"
read_time "one job by id, pending" "SELECT * FROM workrow_job WHERE id = 920000"
read_time "one job by id, scheduled" "SELECT * FROM workrow_job WHERE id = 960000"
read_time "one job by id, running" "SELECT * FROM workrow_job WHERE id = 980100"
read_time "one job by id, dead" "SELECT * FROM workrow_job WHERE id = 990000"
read_time "dead jobs of one queue, counted" "SELECT count(*) FROM workrow_job WHERE queue = 'q1' AND status = 'dead'"
read_time "every job, counted by status" "SELECT status, count(*) FROM workrow_job GROUP BY status"

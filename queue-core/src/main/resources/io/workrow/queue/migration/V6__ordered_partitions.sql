-- The worker registry (WorkerSql): one row per running runtime that works an ordered queue, with
-- its heartbeat on the database's clock. The live workers of a queue own its 1,024 partition
-- buckets by rendezvous hashing.
CREATE TABLE workrow_worker (
    id           text        PRIMARY KEY,
    queues       text[]      NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- Ordered queues (JobSql.JOB_CLAIM_ORDERED). A job of a key may start only while no other job of
-- its key runs. The claim checks that against its snapshot; ordered_key, set by the ordered claim
-- to the partition key, makes it a constraint too: a second running job of one key in one queue
-- cannot be committed, even by two claims whose snapshots each missed the other's job (a producer
-- that committed an older job late, an operator's retry). Other claims clear it.
ALTER TABLE workrow_job ADD COLUMN ordered_key text;
CREATE UNIQUE INDEX workrow_job_key_running_idx
    ON workrow_job (queue, ordered_key)
    WHERE status = 'running' AND ordered_key IS NOT NULL;

-- The oldest pending job of each key (a key's head), and the loose scan over all heads.
CREATE INDEX workrow_job_key_pending_idx
    ON workrow_job (queue, partition_key, id)
    WHERE status = 'pending' AND partition_key IS NOT NULL;

-- What holds a key: its running job, and (with key-failure block) its older scheduled jobs.
CREATE INDEX workrow_job_key_held_idx
    ON workrow_job (queue, partition_key, id)
    WHERE status IN ('scheduled', 'running') AND partition_key IS NOT NULL;

-- Jobs without a key on an ordered queue, which run unordered, found without walking the keyed ones.
CREATE INDEX workrow_job_keyless_claim_idx
    ON workrow_job (queue, priority, run_at, id)
    WHERE status = 'pending' AND partition_key IS NULL;

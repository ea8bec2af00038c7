-- Fair queuing per tenant (JobSql.JOB_CLAIM_WEIGHTED, JOB_CLAIM_BURST, JOB_CLAIM_SPACED).

-- The key a job is shared out by: its own fairness key, else its partition key, set at enqueue.
-- Jobs without either form one group of their own on a fair queue.
ALTER TABLE workrow_job ADD COLUMN fairness_key text;

-- Jobs enqueued before this migration that may still run (a dead one may be retried) take their
-- partition key, as new ones do. Finished history is left as it is.
UPDATE workrow_job SET fairness_key = partition_key
WHERE partition_key IS NOT NULL AND status IN ('scheduled', 'pending', 'running', 'dead');

-- The pending jobs of each key in claim order, and the loose index scan over the keys.
CREATE INDEX workrow_job_fair_claim_idx
    ON workrow_job (queue, fairness_key, priority, run_at, id)
    WHERE status = 'pending' AND fairness_key IS NOT NULL;

-- The pending jobs without a key in claim order, whatever their partition key (a row written by
-- an older version has none). With the index above, every pending row is in exactly one of the two.
CREATE INDEX workrow_job_fair_keyless_idx
    ON workrow_job (queue, priority, run_at, id)
    WHERE status = 'pending' AND fairness_key IS NULL;

-- Per-key settings an operator changes at run time (QueueAdmin.setFairness): a weight for
-- weighted queues, a rate for burst and spaced ones. A key without a row has weight 1 and its
-- queue's rate-per-minute; the key '' stands for the jobs without a key.
CREATE TABLE workrow_fairness_key (
    queue           text        NOT NULL,
    fairness_key    text        NOT NULL,
    weight          float8      CHECK (weight > 0),
    rate_per_minute integer     CHECK (rate_per_minute > 0),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, fairness_key)
);

-- What the fair claims remember per key, written in the claim's own statement: the virtual
-- start of the key's last claimed job (weighted; the latest of them is the queue's virtual clock), the current minute's window and how many jobs
-- it started (burst), the earliest time of the key's next start (spaced). Unlogged: it is
-- rebuilt from nothing after a crash (one window may then start up to a rate more), and it is
-- written on every claim, so it should cost no WAL. Rows untouched for a while are pruned.
CREATE UNLOGGED TABLE workrow_fairness_state (
    queue          text        NOT NULL,
    fairness_key   text        NOT NULL,
    virtual_start  float8,
    window_start   timestamptz,
    window_limit   integer,
    window_started integer,
    window_granted integer,
    next_start_at  timestamptz,
    touched_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, fairness_key)
);

-- Fair queuing per tenant (JobSql.JOB_CLAIM_WEIGHTED, JOB_CLAIM_BURST, JOB_CLAIM_SPACED).

-- The key a job is shared out by: its own fairness key, else its partition key, set at enqueue;
-- '' for jobs with neither, which form one group of their own on a fair queue. The default makes
-- rows written by an older version keyless rather than lost to the fair claims, and needs no
-- table rewrite.
ALTER TABLE workrow_job ADD COLUMN fairness_key text NOT NULL DEFAULT '';

-- Jobs enqueued before this migration that may still run (a dead one may be retried) take their
-- partition key, as new ones do. Finished history is left as it is.
UPDATE workrow_job SET fairness_key = partition_key
WHERE partition_key IS NOT NULL AND status IN ('scheduled', 'pending', 'running', 'dead');

-- The pending jobs of each key in claim order, and the loose index scan over the keys. Every
-- pending row is in it, so an enqueue on any queue writes one entry more; a claim moves the row
-- out (a running row is not pending) and adds none.
CREATE INDEX workrow_job_fair_claim_idx
    ON workrow_job (queue, fairness_key, priority, run_at, id)
    WHERE status = 'pending';

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

-- What the fair claims remember per key, written in the claim's own statement:
--   weighted: virtual_start, of the key's last claimed job (the latest of them on a queue is its
--             virtual clock);
--   burst:    window_start, the current minute, and window_started, the jobs started in it;
--             window_limit and window_granted carry the rate and the grant through the claim's
--             upsert (ON CONFLICT sees the inserted row only as "excluded") and are not read later;
--   spaced:   next_start_at, the earliest time of the key's next start (the frontier).
-- Unlogged: it is rebuilt from nothing after a crash (one window may then start up to a rate
-- more), and it is written on every claim, so it should cost no WAL. Rows untouched for ten
-- minutes are pruned (FairnessStatePruner).
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

-- One row per runtime holding jobs: the lease tokens its last renewal listed, and until when that
-- renewal vouches for them (JobSql's JOB_RENEW_LEASES writes it in the same statement that renews
-- the jobs' rows). A renewal skips job rows another session has locked, an operator's open
-- transaction say, so such a row's own lease may run out while its holder is alive and renewing;
-- the sweeper passes over an expired job whose token a holder lists with renewed_until still
-- ahead. A crashed or frozen holder stops writing here, and its renewed_until passes like a lease.
CREATE TABLE workrow_lease_holder (
    worker        text        PRIMARY KEY,
    renewed_until timestamptz NOT NULL,
    tokens        bigint[]    NOT NULL
);

-- Each queue's recovery rules, as the last runtime to start with a handler for it declared them
-- (QueueRuleSql): the sweeper on any node recovers the queue's jobs by these, not by its own
-- configuration, so a node that does not work a queue still applies the queue's backoff and
-- max-lease-expiries.
CREATE TABLE workrow_queue_rule (
    queue              text             PRIMARY KEY,
    backoff_initial_ms bigint           NOT NULL,
    backoff_multiplier double precision NOT NULL,
    backoff_max_ms     bigint           NOT NULL,
    backoff_jitter     double precision NOT NULL,
    max_lease_expiries int              NOT NULL,
    declared_by        text             NOT NULL,
    declared_at        timestamptz      NOT NULL DEFAULT now()
);

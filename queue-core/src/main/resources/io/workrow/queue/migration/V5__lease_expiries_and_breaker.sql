-- Crash versus error: how often a job's lease expired (its worker died or froze while running it),
-- counted apart from the attempts its handler used. A queue's max-lease-expiries retires a job that
-- keeps killing its workers (JobSql.JOB_SWEEP_EXPIRED_LEASES). A constant default is metadata only:
-- adding the column does not rewrite the table.
ALTER TABLE workrow_job ADD COLUMN lease_expiries integer NOT NULL DEFAULT 0;

-- One circuit breaker per queue that has one (BreakerSql), shared by every node and kept across
-- restarts. closed: jobs are claimed, consecutive failures counted; open: no node claims the
-- queue's jobs until open_until; half_open: probes_claimed probes of a round are out, and a new
-- round may start at open_until if none has answered. Opened by hand, open_until is 'infinity'.
CREATE TABLE workrow_breaker (
    queue          text        PRIMARY KEY,
    state          text        NOT NULL DEFAULT 'closed' CHECK (state IN ('closed', 'open', 'half_open')),
    failures       integer     NOT NULL DEFAULT 0,
    open_until     timestamptz,
    probes_claimed integer     NOT NULL DEFAULT 0,
    changed_at     timestamptz NOT NULL DEFAULT now(),
    reason         text
);

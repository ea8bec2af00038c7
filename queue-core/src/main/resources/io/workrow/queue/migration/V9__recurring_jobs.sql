-- One row per recurring job any node declares (RecurringSql), shared by every node and kept across
-- restarts: the schedule last declared, the last tick a job was enqueued for, and the next one due.
-- A node enqueues a tick's job only in the transaction that moves last_tick forward to that tick
-- (RECURRING_ADVANCE), and the job's idempotency key holds the tick as well, so every node may try
-- each tick and exactly one job is made. After downtime, last_tick says which ticks were missed.
CREATE TABLE workrow_recurring (
    name        text        PRIMARY KEY,
    queue       text        NOT NULL,
    cron        text        NOT NULL,
    zone        text        NOT NULL,
    last_tick   timestamptz,
    next_tick   timestamptz,
    declared_at timestamptz NOT NULL DEFAULT now()
);

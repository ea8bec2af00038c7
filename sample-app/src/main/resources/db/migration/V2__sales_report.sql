-- One sales report per morning: the tick it was enqueued for is the key, so a report job that runs
-- twice (after a crash or a lost lease) writes one report.
CREATE TABLE sales_report (
    tick         timestamptz PRIMARY KEY,
    days         integer     NOT NULL,
    orders       bigint      NOT NULL,
    amount_cents bigint      NOT NULL,
    written_at   timestamptz NOT NULL DEFAULT now()
);

-- Cluster-wide caps by shares: each node holds a share of a capped queue's slots, and starts at
-- most that many of its jobs at once; the shares of live nodes never add up to more than the cap.
-- Jobs a node claimed ahead (its line) hold no slot, so a capped queue claims ahead like any other.
-- Old and new nodes must not work one capped queue together: an old node counts claimed jobs
-- against the cap and ignores the shares. So that it fails closed rather than run up to the cap
-- beside the new nodes' shares, the configured cluster-wide cap's column is renamed: an old node's
-- capped claim, which reads it, fails (and is retried at its next poll) until the node is replaced.
SELECT set_config('search_path', quote_ident(current_schema()), true);

ALTER TABLE workrow_queue_cap RENAME COLUMN configured TO global_configured;

-- One row per node holding, or wanting, a share of a capped queue. slots: what it holds (it starts
-- no more at once); wanted: what it could use now, so that a node holding more than its fair part
-- gives some back when another wants; waiting_since: since when it has wanted slots and held none,
-- so that an ordered queue's slots go round the nodes (each owns its keys). A share counts until
-- expires_at, which the node's lease renewals push on while it holds jobs, so a crashed node's
-- share lapses with its leases; a want without slots counts for a second, renewed by the waiting
-- node's changes. Changed only under the lock of the queue's workrow_queue_cap row, by the node.
CREATE TABLE workrow_cap_share (
    queue      text        NOT NULL,
    worker     text        NOT NULL,
    slots      integer     NOT NULL CHECK (slots >= 0),
    wanted     integer     NOT NULL CHECK (wanted >= 0),
    waiting_since timestamptz,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (queue, worker)
);

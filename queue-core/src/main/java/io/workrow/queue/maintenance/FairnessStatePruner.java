package io.workrow.queue.maintenance;

import io.workrow.queue.store.JobStore;
import java.time.Duration;

/**
 * Deletes what fair claims remember about keys whose backlog ended ({@code workrow_fairness_state}
 * rows no claim touched for {@link #IDLE}), so a queue with ever new tenants keeps a small state
 * table. No window or spacing outlives a minute, so nothing enforced is lost.
 */
public final class FairnessStatePruner implements MaintenanceTask {

    /** How long a key's state is kept after its last claimed job. */
    public static final Duration IDLE = Duration.ofMinutes(10);

    private final JobStore store;
    private final int batchSize;

    public FairnessStatePruner(JobStore store, int batchSize) {
        this.store = store;
        this.batchSize = batchSize;
    }

    @Override
    public String name() {
        return "fairness-state-pruner";
    }

    @Override
    public int runOnce() {
        int total = 0;
        int pruned;
        do {
            pruned = store.fairness().pruneState(IDLE, batchSize);
            total += pruned;
        } while (pruned == batchSize);
        return total;
    }
}

package io.workrow.queue.maintenance;

import io.workrow.queue.store.JobStore;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the partitions history and new jobs will land in before they are needed (the write-once
 * layout's outcome days, a week ahead, and its next job-data id range, once half of the newest is
 * used), so that rows never pile up in a default partition, which every new partition would then
 * have to scan. Each creation takes its own short lock and gives up rather than wait long; the
 * next pass tries again.
 */
public final class PartitionKeeper implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(PartitionKeeper.class);

    private final JobStore store;

    public PartitionKeeper(JobStore store) {
        this.store = store;
    }

    @Override
    public String name() {
        return "partition-keeper";
    }

    @Override
    public int runOnce() {
        List<String> created = store.keepPartitionsAhead();
        if (!created.isEmpty()) {
            log.info("Created partitions ahead of need: {}", created);
        }
        return created.size();
    }
}

package io.workrow.queue.maintenance;

import io.workrow.queue.JobStatus;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes finished jobs once they are older than their status's retention, a batch at a time
 * ({@link JobStore#pruneFinished}): whole days of the outcome log and whole id ranges of job data
 * dropped, and dead jobs deleted in batches small enough that no delete holds many locks or writes
 * a burst of WAL. A pass
 * goes on until nothing old is left, which after a long pause may take minutes: it runs on a
 * maintenance thread of its own, and stops between batches when that thread is interrupted (the
 * application stopping).
 */
public final class RetentionPruner implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(RetentionPruner.class);

    private final JobStore store;
    private final Map<JobStatus, Duration> retention;
    private final int batchSize;

    /** @param retention how long to keep finished jobs of each status; statuses not named are kept */
    public RetentionPruner(JobStore store, Map<JobStatus, Duration> retention, int batchSize) {
        retention.keySet().forEach(status -> {
            if (!status.isFinished()) {
                throw new IllegalArgumentException("Retention applies to finished statuses only, not " + status);
            }
        });
        this.store = store;
        this.retention = new LinkedHashMap<>(retention);
        this.batchSize = batchSize;
    }

    @Override
    public String name() {
        return "retention-pruner";
    }

    @Override
    public int runOnce() {
        int total = 0;
        int batch;
        do {
            batch = store.pruneFinished(retention, batchSize);
            total += batch;
        } while (batch > 0 && !Thread.currentThread().isInterrupted());
        if (total > 0) {
            log.info("Pruned {} finished jobs (or partitions of them) past their retention {}", total, retention);
        }
        return total;
    }
}

package io.workrow.queue.maintenance;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.MovedJob;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovers jobs whose worker stopped renewing its lease (crashed, frozen, partitioned): back to
 * {@code pending} with no owner, or to {@code dead} when the attempt that was running was the
 * last. The worker that lost the lease can no longer finish the job: its token no longer matches.
 */
public final class StaleLeaseSweeper implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(StaleLeaseSweeper.class);

    private final JobStore store;
    private final int batchSize;
    private final QueueMetrics metrics;

    public StaleLeaseSweeper(JobStore store, int batchSize) {
        this(store, batchSize, QueueMetrics.NOOP);
    }

    public StaleLeaseSweeper(JobStore store, int batchSize, QueueMetrics metrics) {
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
    }

    @Override
    public String name() {
        return "stale-lease-sweeper";
    }

    @Override
    public int runOnce() {
        int total = 0;
        List<MovedJob> moved;
        do {
            moved = store.sweepExpiredLeases(batchSize);
            for (MovedJob job : moved) {
                log.info("job={} queue={} attempt={}/{} lease expired while held by {}; now {}", job.id(), job.queue(),
                        job.attempts(), job.maxAttempts(), job.previousOwner(), job.status().columnValue());
                metrics.staleRecovered(job.queue());
                if (job.status() == JobStatus.DEAD) {
                    metrics.retired(job.queue());
                }
            }
            total += moved.size();
        } while (moved.size() == batchSize);
        return total;
    }
}

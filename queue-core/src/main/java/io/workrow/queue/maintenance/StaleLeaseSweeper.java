package io.workrow.queue.maintenance;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.BackoffRule;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.MovedJob;
import io.workrow.queue.worker.RetryBackoff;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovers jobs whose worker stopped renewing its lease (crashed, frozen, partitioned): back to
 * {@code pending} with no owner after its queue's retry backoff, or to {@code dead} when the
 * attempt that was running was the last. The backoff matters: a job that kills its worker (out of
 * memory, say) must not take the next node down at once. The worker that lost the lease can no
 * longer finish the job: its token no longer matches.
 */
public final class StaleLeaseSweeper implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(StaleLeaseSweeper.class);

    private final JobStore store;
    private final int batchSize;
    private final QueueMetrics metrics;
    private final List<BackoffRule> backoffs;
    private final BackoffRule fallback;

    /** Every queue recovered with the default backoff. */
    public StaleLeaseSweeper(JobStore store, int batchSize) {
        this(store, batchSize, QueueMetrics.NOOP, Map.of(), RetryBackoff.DEFAULT);
    }

    /**
     * @param backoffs the backoff of each queue that has its own
     * @param fallback the backoff of every other queue
     */
    public StaleLeaseSweeper(JobStore store, int batchSize, QueueMetrics metrics, Map<String, RetryBackoff> backoffs,
            RetryBackoff fallback) {
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
        this.backoffs = backoffs.entrySet().stream().map(entry -> rule(entry.getKey(), entry.getValue())).toList();
        this.fallback = rule(null, fallback);
    }

    private static BackoffRule rule(String queue, RetryBackoff backoff) {
        return new BackoffRule(queue, backoff.initial().toMillis(), backoff.multiplier(), backoff.max().toMillis(),
                backoff.jitter());
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
            moved = store.sweepExpiredLeases(batchSize, backoffs, fallback);
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

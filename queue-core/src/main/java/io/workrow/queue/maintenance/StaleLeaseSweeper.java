package io.workrow.queue.maintenance;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.RecoveryRule;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.MovedJob;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.RetryBackoff;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovers jobs whose worker stopped renewing its lease (crashed, frozen, partitioned): back to
 * {@code pending} with no owner after its queue's retry backoff, or to {@code dead}. The backoff
 * matters: a job that kills its worker (out of memory, say) must not take the next node down at
 * once. Each expiry is counted on the job ({@code lease_expiries}), apart from handler failures; a
 * queue with {@code max-lease-expiries} retires a job that keeps killing its workers after that
 * many, without spending the attempts its handler may still need. Elsewhere the expired attempt is
 * spent like a failure. The worker that lost the lease can no longer finish the job: its token no
 * longer matches.
 *
 * <p>A queue's rules are its own wherever the sweeper runs: those the runtimes working it declared
 * in the database ({@code workrow_queue_rule}) come first, this node's configuration serves only
 * queues nobody declared. A job whose holder is alive and still renewing it (its row was locked
 * elsewhere when the renewal came) is passed over.
 */
public final class StaleLeaseSweeper implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(StaleLeaseSweeper.class);

    private final JobStore store;
    private final int batchSize;
    private final QueueMetrics metrics;
    private final List<RecoveryRule> rules;
    private final RecoveryRule fallback;

    /** Every queue recovered with the default backoff and no lease expiry limit. */
    public StaleLeaseSweeper(JobStore store, int batchSize) {
        this(store, batchSize, QueueMetrics.NOOP, Map.of(), RetryBackoff.DEFAULT);
    }

    /**
     * @param backoffs the backoff of each queue that has its own
     * @param fallback the backoff of every other queue
     */
    public StaleLeaseSweeper(JobStore store, int batchSize, QueueMetrics metrics, Map<String, RetryBackoff> backoffs,
            RetryBackoff fallback) {
        this(store, batchSize, metrics, rules(backoffs), rule(null, fallback, 0));
    }

    /**
     * @param queues the options of each queue that has its own (backoff, max-lease-expiries)
     * @param defaults the options of every other queue
     */
    public StaleLeaseSweeper(JobStore store, int batchSize, QueueMetrics metrics, Map<String, QueueOptions> queues,
            QueueOptions defaults) {
        this(store, batchSize, metrics, queues.entrySet().stream()
                .map(entry -> entry.getValue().recoveryRule(entry.getKey())).toList(), defaults.recoveryRule(null));
    }

    private StaleLeaseSweeper(JobStore store, int batchSize, QueueMetrics metrics, List<RecoveryRule> rules,
            RecoveryRule fallback) {
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
        this.rules = rules;
        this.fallback = fallback;
    }

    private static List<RecoveryRule> rules(Map<String, RetryBackoff> backoffs) {
        return backoffs.entrySet().stream().map(entry -> rule(entry.getKey(), entry.getValue(), 0)).toList();
    }

    private static RecoveryRule rule(String queue, RetryBackoff backoff, int maxLeaseExpiries) {
        return new RecoveryRule(queue, backoff.initial().toMillis(), backoff.multiplier(), backoff.max().toMillis(),
                backoff.jitter(), maxLeaseExpiries);
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
            moved = store.sweepExpiredLeases(batchSize, rules, fallback);
            for (MovedJob job : moved) {
                log.info("job={} queue={} attempt={}/{} lease expired while held by {} (expiry {}); now {}", job.id(),
                        job.queue(), job.attempts(), job.maxAttempts(), job.previousOwner(), job.leaseExpiries(),
                        job.status().columnValue());
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

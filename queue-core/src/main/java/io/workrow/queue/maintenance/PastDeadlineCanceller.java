package io.workrow.queue.maintenance;

import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.MovedJob;
import io.workrow.queue.store.PastDeadlines;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cancels jobs that nobody started by their deadline ({@code JobRequest.expiresAt}) where they
 * wait: in a paused queue, a queue no node works, or too deep a backlog. A worker never starts a
 * job past its deadline anyway; this makes the job end at the deadline, visibly, with its
 * dependents settled, instead of whenever a claim reaches it.
 */
public final class PastDeadlineCanceller implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(PastDeadlineCanceller.class);

    /**
     * When the deadline of a job held by a worker (or locked for now) is looked at again: the job
     * may come back to wait (a retry, a release at shutdown, a lost lease) and is then cancelled.
     */
    static final Duration LOOK_AGAIN = Duration.ofSeconds(30);

    private final JobStore store;
    private final int batchSize;
    private final QueueMetrics metrics;

    private final Duration lookAgain;

    public PastDeadlineCanceller(JobStore store, int batchSize, QueueMetrics metrics) {
        this(store, batchSize, metrics, LOOK_AGAIN);
    }

    PastDeadlineCanceller(JobStore store, int batchSize, QueueMetrics metrics, Duration lookAgain) {
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
        this.lookAgain = lookAgain;
    }

    @Override
    public String name() {
        return "past-deadline-canceller";
    }

    @Override
    public int runOnce() {
        int total = 0;
        PastDeadlines pass;
        do {
            pass = store.cancelPastDeadline(batchSize, lookAgain);
            for (MovedJob job : pass.cancelled()) {
                log.info("job={} queue={} attempts={} was not started by its deadline; now cancelled (expired)",
                        job.id(), job.queue(), job.attempts());
                metrics.expired(job.queue());
            }
            total += pass.cancelled().size();
        } while (pass.taken() == batchSize);
        return total;
    }
}

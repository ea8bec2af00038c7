package io.workrow.queue.maintenance;

import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.MovedJob;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves pending jobs that have no attempts left to {@code dead}, so a poison job can never be
 * claimed again, whatever path left it pending (for example an operator lowering
 * {@code max_attempts}).
 */
public final class ExhaustedJobRetirer implements MaintenanceTask {

    private static final Logger log = LoggerFactory.getLogger(ExhaustedJobRetirer.class);

    private final JobStore store;
    private final int batchSize;
    private final QueueMetrics metrics;

    public ExhaustedJobRetirer(JobStore store, int batchSize) {
        this(store, batchSize, QueueMetrics.NOOP);
    }

    public ExhaustedJobRetirer(JobStore store, int batchSize, QueueMetrics metrics) {
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
    }

    @Override
    public String name() {
        return "exhausted-job-retirer";
    }

    @Override
    public int runOnce() {
        int total = 0;
        List<MovedJob> retired;
        do {
            retired = store.retireExhausted(batchSize);
            for (MovedJob job : retired) {
                log.info("job={} queue={} attempts={}/{} has no attempts left; now dead", job.id(), job.queue(),
                        job.attempts(), job.maxAttempts());
                metrics.retired(job.queue());
            }
            total += retired.size();
        } while (retired.size() == batchSize);
        return total;
    }
}

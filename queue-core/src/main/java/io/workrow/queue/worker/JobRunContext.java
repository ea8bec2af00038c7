package io.workrow.queue.worker;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobLeaseLostException;
import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.time.Instant;

/** {@link JobContext} for one claimed job; its writes carry the job's fencing token. */
final class JobRunContext implements JobContext {

    private final ClaimedJob job;
    private final JobStore store;
    private volatile String step;

    JobRunContext(ClaimedJob job, JobStore store) {
        this.job = job;
        this.store = store;
        this.step = job.step();
    }

    @Override
    public long id() {
        return job.id();
    }

    @Override
    public String queue() {
        return job.queue();
    }

    @Override
    public int attempt() {
        return job.attempt();
    }

    @Override
    public int maxAttempts() {
        return job.maxAttempts();
    }

    @Override
    public String partitionKey() {
        return job.partitionKey();
    }

    @Override
    public String idempotencyKey() {
        return job.idempotencyKey() != null ? job.idempotencyKey() : "workrow:" + job.queue() + ":" + job.id();
    }

    @Override
    public Instant runAt() {
        return job.runAt();
    }

    @Override
    public void extendLease(Duration lease) {
        Settings.requirePositive("lease", lease);
        if (!store.extendLease(held(), lease)) {
            throw lost("extend its lease");
        }
    }

    @Override
    public String step() {
        return step;
    }

    @Override
    public void saveStep(String step) {
        if (!store.saveStep(held(), step)) {
            throw lost("save step '" + step + "'");
        }
        this.step = step;
    }

    private HeldJob held() {
        return new HeldJob(job.id(), job.leaseToken());
    }

    private JobLeaseLostException lost(String action) {
        return new JobLeaseLostException("job=" + job.id() + " queue=" + job.queue() + " could not " + action
                + ": this worker no longer holds its lease");
    }
}

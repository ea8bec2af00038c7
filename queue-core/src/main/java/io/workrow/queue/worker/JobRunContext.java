package io.workrow.queue.worker;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobLeaseLostException;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link JobContext} for one running job. Its writes carry the job's fencing token and run on the
 * lease keeper's thread, so they commit on their own even inside a transactional handler: a step
 * saved before a throw stays saved, and a lease extension is seen by every session at once.
 */
final class JobRunContext implements JobContext {

    private final RunningJob running;
    private final LeaseKeeper keeper;
    private final ClaimStore store;
    private final PayloadCodec codec;
    private volatile String step;

    JobRunContext(RunningJob running, LeaseKeeper keeper, ClaimStore store, PayloadCodec codec) {
        this.running = running;
        this.keeper = keeper;
        this.store = store;
        this.codec = codec;
        this.step = running.job().step();
    }

    private ClaimedPosition job() {
        return running.job();
    }

    @Override
    public long id() {
        return job().id();
    }

    @Override
    public String queue() {
        return job().queue();
    }

    @Override
    public int attempt() {
        return job().attempt();
    }

    @Override
    public int maxAttempts() {
        return job().maxAttempts();
    }

    @Override
    public String partitionKey() {
        return job().partitionKey();
    }

    @Override
    public String idempotencyKey() {
        return job().idempotencyKey() != null ? job().idempotencyKey() : "workrow:" + job().queue() + ":" + job().id();
    }

    @Override
    public Instant runAt() {
        return job().runAt();
    }

    @Override
    public void extendLease(Duration lease) {
        Settings.requirePositive("lease", lease);
        failIfLost("extend its lease");
        if (!keeper.call(store -> running.unlessAbandoned(() -> store.extendLease(running.job(), lease)))) {
            running.requestStop(RunningJob.Stop.LEASE_LOST);
            throw lost("extend its lease");
        }
        running.extendLeaseTo(lease);
    }

    @Override
    public String step() {
        return step;
    }

    @Override
    public void saveStep(String step) {
        failIfLost("save step '" + step + "'");
        if (!keeper.call(store -> running.unlessAbandoned(() -> store.saveStep(running.job(), step)))) {
            running.requestStop(RunningJob.Stop.LEASE_LOST);
            throw lost("save step '" + step + "'");
        }
        this.step = step;
    }

    @Override
    public boolean isLeaseLost() {
        return running.lost() || running.leaseAbandoned();
    }

    @Override
    public boolean isCancelled() {
        return running.stopReason() == RunningJob.Stop.CANCELLED;
    }

    @Override
    public java.util.OptionalLong batchId() {
        Long batch = job().batchId();
        return batch == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(batch);
    }

    @Override
    public <T> Map<Long, T> dependencyResults(Class<T> type) {
        Map<Long, T> results = new LinkedHashMap<>();
        store.dependencyResultsJson(id()).forEach((id, json) -> results.put(id, type.cast(codec.decode(json, type))));
        return results;
    }

    private void failIfLost(String action) {
        if (running.lost() || running.leaseAbandoned()) {
            throw lost(action);
        }
    }

    private JobLeaseLostException lost(String action) {
        return new JobLeaseLostException(running + " could not " + action + ": this worker no longer holds its lease"
                + (isCancelled() ? " (the job was cancelled)" : ""));
    }
}

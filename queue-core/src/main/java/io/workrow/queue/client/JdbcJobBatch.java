package io.workrow.queue.client;

import io.workrow.queue.BatchReceipt;
import io.workrow.queue.JobBatch;
import io.workrow.queue.JobRequest;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.NewJob;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * {@link JobBatch} on {@link JobStore#insertBatch}: collects the requests, encodes and checks them
 * as {@link JdbcJobQueue} does, and writes them in one transaction at {@link #enqueue()}.
 */
final class JdbcJobBatch implements JobBatch {

    private final JobStore store;
    private final Function<JobRequest, NewJob> encode;
    private final List<JobRequest> members = new ArrayList<>();
    private JobRequest onSuccess;
    private JobRequest onFinish;
    private boolean enqueued;

    JdbcJobBatch(JobStore store, Function<JobRequest, NewJob> encode) {
        this.store = store;
        this.encode = encode;
    }

    @Override
    public JobBatch add(JobRequest member) {
        Objects.requireNonNull(member, "member");
        if (member.replacesWaiting() || member.keyScope() != io.workrow.queue.KeyScope.WHILE_RETAINED) {
            // A member counts in its batch once: it cannot become another job's replacement, nor
            // hand its key to a job outside the batch.
            throw new IllegalArgumentException("batch member " + member + " replaces a waiting job or scopes its"
                    + " key: a batch's members keep their keys while they are kept");
        }
        members.add(member);
        return this;
    }

    @Override
    public JobBatch addAll(Collection<JobRequest> members) {
        members.forEach(this::add);
        return this;
    }

    @Override
    public JobBatch onSuccess(JobRequest callback) {
        onSuccess = callback(callback, onSuccess, "onSuccess");
        return this;
    }

    @Override
    public JobBatch onFinish(JobRequest callback) {
        onFinish = callback(callback, onFinish, "onFinish");
        return this;
    }

    private static JobRequest callback(JobRequest callback, JobRequest existing, String kind) {
        Objects.requireNonNull(callback, kind);
        if (existing != null) {
            throw new IllegalStateException("a batch has at most one " + kind + " callback");
        }
        if (callback.idempotencyKey() != null) {
            throw new IllegalArgumentException(kind + " callback " + callback
                    + " has an idempotency key: a callback runs once for its batch, which is its key");
        }
        if (!callback.after().isEmpty() || !callback.afterSettled().isEmpty()) {
            throw new IllegalArgumentException(kind + " callback " + callback
                    + " waits for other jobs: a callback waits for its batch alone");
        }
        return callback;
    }

    @Override
    public synchronized BatchReceipt enqueue() {
        if (enqueued) {
            throw new IllegalStateException("this batch was enqueued already; start another with JobQueue.batch()");
        }
        List<NewJob> encoded = members.stream().map(encode).toList();
        BatchReceipt receipt = store.insertBatch(encoded, onSuccess == null ? null : encode.apply(onSuccess),
                onFinish == null ? null : encode.apply(onFinish));
        enqueued = true;
        return receipt;
    }
}

package io.workrow.queue;

import java.util.List;

/**
 * What {@link JobBatch#enqueue()} wrote: the batch, and its members' ids in the order they were
 * added (a member whose idempotency key was taken is not among them: it is not in the batch).
 */
public record BatchReceipt(long batchId, List<Long> jobIds) {

    public BatchReceipt {
        jobIds = List.copyOf(jobIds);
    }
}

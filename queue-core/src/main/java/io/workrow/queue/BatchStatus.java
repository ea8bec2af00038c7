package io.workrow.queue;

import java.time.Instant;
import java.util.Map;

/**
 * A batch as {@link QueueAdmin#batch(long)} reads it.
 *
 * @param total the members the batch holds
 * @param counts members by status: completed, dead and cancelled from the batch's counters,
 *     pending, scheduled and waiting from their homes, running the rest, all in one snapshot;
 *     statuses with no member are left out
 * @param onSuccessId the onSuccess callback's job id, or {@code null}
 * @param onFinishId the onFinish callback's job id, or {@code null}
 * @param finishedAt when its last member ended and its callbacks were released; {@code null} until then
 */
public record BatchStatus(long batchId, int total, Map<JobStatus, Long> counts, Long onSuccessId, Long onFinishId,
        Instant createdAt, Instant finishedAt) {

    public BatchStatus {
        counts = Map.copyOf(counts);
    }

    /** Whether every member has ended and the callbacks were released. */
    public boolean finished() {
        return finishedAt != null;
    }
}

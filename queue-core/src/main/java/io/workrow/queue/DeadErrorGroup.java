package io.workrow.queue;

import java.time.Instant;
import java.util.List;

/**
 * Dead jobs of one queue that died of the same kind of error: the text of {@code last_error}
 * before its first colon, which with the default error describer is the exception's class
 * ({@code "lease expired"} for the engine's lease expiries, {@code ""} for no error).
 * {@link QueueAdmin#retryDeadGroup(String, String)} with {@link #error()} retries the group.
 *
 * @param jobs how many of the newest {@value QueueAdmin#DEAD_GROUP_SAMPLE} dead jobs are of the group (all
 *     of its jobs when fewer have died; 0 when its jobs are all older)
 * @param lastDiedAt when the newest of them died
 * @param newestIds the ids of the newest few, newest first
 * @param example the newest one's whole {@code last_error}
 */
public record DeadErrorGroup(String queue, String error, long jobs, Instant lastDiedAt, List<Long> newestIds,
        String example) {
}

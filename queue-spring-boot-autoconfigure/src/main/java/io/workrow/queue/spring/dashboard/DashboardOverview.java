package io.workrow.queue.spring.dashboard;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Everything the page shows but one job's row, as JSON. Times are epoch milliseconds and ages
 * milliseconds, so the page reads them the same whatever the application's JSON settings.
 *
 * @param now the server's clock when read, which the page measures leases and ages against
 * @param deadGroupSample how many of the newest dead jobs the dead groups are counted among
 * @param unavailable the parts that could not be read, each with the kind of failure; they are
 *     shown empty
 */
public record DashboardOverview(long now, long refreshMillis, Writes writes,
        List<QueueView> queues, List<RunningJob> running, List<DeadGroup> deadGroups, int deadGroupSample,
        List<Fairness> fairness, List<Recurring> recurring, List<String> unavailable) {

    /** The same overview as another request may see it: writes are decided per request. */
    DashboardOverview withWrites(Writes writes) {
        return new DashboardOverview(now, refreshMillis, writes, queues, running, deadGroups, deadGroupSample, fairness,
                recurring, unavailable);
    }

    /**
     * Whether the page offers writes, or why not. Where it sends them is in the page itself, as
     * the request reached it (context and servlet path included).
     */
    public record Writes(boolean allowed, @Nullable String reason) {
    }

    /**
     * One queue's row.
     *
     * @param completedPerMinute completed jobs per minute over the last hour, oldest first, the current minute last
     * @param deadPerMinute dead jobs per minute over the same minutes
     * @param hold the live hold of the whole queue, or {@code null}
     * @param keysHeld how many of its partition keys are held (the keys themselves are not shown:
     *     they may name a person)
     * @param keysHeldUntil when the last of those holds ends, or {@code null}
     * @param globalConcurrency the queue's cluster-wide concurrency cap in force, or {@code null}
     * @param keyConcurrency the queue's per-key concurrency cap in force, or {@code null}
     */
    public record QueueView(String queue, long pending, long due, long scheduled, long running, long dead,
            long oldestDueMillis, boolean paused, @Nullable Breaker breaker,
            List<Long> completedPerMinute, List<Long> deadPerMinute, long waiting, @Nullable Hold hold,
            int keysHeld, @Nullable Long keysHeldUntil, @Nullable Integer globalConcurrency,
            @Nullable Integer keyConcurrency) {
    }

    /** A live hold of a whole queue: no node claims its jobs until {@code until}. */
    public record Hold(long until, @Nullable String reason) {
    }

    /** A queue's circuit breaker. */
    public record Breaker(String state, int failures, @Nullable Long openUntil, @Nullable Long changedAt,
            @Nullable String reason) {
    }

    /** A running job with its owner and lease. */
    public record RunningJob(long id, String queue, int attempts, int maxAttempts, @Nullable String claimedBy,
            @Nullable Long leaseExpiresAt, @Nullable Long runAt) {
    }

    /** Dead jobs of one queue with one kind of error. */
    public record DeadGroup(String queue, String error, long jobs, @Nullable Long lastDiedAt, List<Long> newestIds,
            @Nullable String example) {
    }

    /** One fairness key's setting. */
    public record Fairness(String queue, String key, @Nullable Double weight, @Nullable Integer ratePerMinute) {
    }

    /** A recurring job with its last and next tick. */
    public record Recurring(String name, String queue, String cron, String zone, @Nullable Long lastTick,
            @Nullable Long nextTick) {
    }
}

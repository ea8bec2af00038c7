package io.workrow.queue;

import java.time.Duration;

/**
 * One queue's jobs by status, as the {@code workrow_queue_stats} view shows them.
 *
 * @param due pending jobs whose {@code run_at} has passed
 * @param oldestDueAge how long the oldest due pending job has waited; zero when none is due
 * @param maxAttemptsUsed the most attempts any open (pending or running) job has used
 * @param paused whether the queue is paused on every node
 */
public record QueueStats(String queue, long pending, long due, long running, long completed, long dead,
        long cancelled, Duration oldestDueAge, int maxAttemptsUsed, boolean paused, long scheduled) {
}

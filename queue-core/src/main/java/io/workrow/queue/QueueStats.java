package io.workrow.queue;

import java.time.Duration;

/**
 * One queue's open work: what waits, what runs and what died. Read from the partial indexes of
 * open and dead jobs, so its cost does not grow with the finished history; how many jobs
 * completed or died recently is {@link QueueAdmin#finishedPerMinute}, and totals over the whole
 * retained history are in the {@code workrow_queue_stats} view.
 *
 * @param pending jobs waiting to be claimed
 * @param due pending jobs whose {@code run_at} has passed
 * @param scheduled jobs due later (a future {@code run_at}, or a retry's backoff)
 * @param dead dead jobs still retained
 * @param oldestDueAge how long the oldest due pending job has waited; zero when none is due
 * @param paused whether the queue is paused on every node
 * @param waiting jobs waiting for other jobs to end ({@code JobRequest.after}), not claimable yet
 */
public record QueueStats(String queue, long pending, long due, long scheduled, long running, long dead,
        Duration oldestDueAge, boolean paused, long waiting) {

    /** A queue with no job waiting for others. */
    public QueueStats(String queue, long pending, long due, long scheduled, long running, long dead,
            Duration oldestDueAge, boolean paused) {
        this(queue, pending, due, scheduled, running, dead, oldestDueAge, paused, 0);
    }
}

package io.workrow.queue;

import java.time.Duration;

/**
 * One queue's jobs by status.
 *
 * @param oldestDueAge how long the oldest pending job that is due has been due; zero when none is
 */
public record QueueStats(String queue, long pending, long running, long completed, long dead, long cancelled,
        Duration oldestDueAge) {
}

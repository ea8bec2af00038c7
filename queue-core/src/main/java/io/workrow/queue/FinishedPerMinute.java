package io.workrow.queue;

import java.time.Instant;

/**
 * How many jobs of one queue finished in one minute: completed, and dead (retired or discarded).
 *
 * @param minute the minute's start, by the database's clock
 */
public record FinishedPerMinute(String queue, Instant minute, long completed, long dead) {
}

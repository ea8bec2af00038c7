package io.workrow.queue;

import java.time.Instant;

/**
 * A recurring job as the database knows it ({@code workrow_recurring}): the schedule the last
 * node to start declared, the tick a job was last enqueued for ({@code null} before the first),
 * the next tick due, and when it was last declared. An entry removed from every node's
 * configuration keeps its row, with a {@code declaredAt} that no longer moves.
 */
public record RecurringStatus(String name, String queue, String cron, String zone, Instant lastTick,
        Instant nextTick, Instant declaredAt) {
}

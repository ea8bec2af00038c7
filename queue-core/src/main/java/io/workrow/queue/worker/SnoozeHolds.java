package io.workrow.queue.worker;

import io.workrow.queue.QueueHold;
import io.workrow.queue.SnoozeJobException;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.HoldStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the hold a snooze asks for ({@link SnoozeJobException#wholeQueue()},
 * {@link SnoozeJobException#wholeKey()}) before its job's own snooze is written, so that the next
 * claims on every node see it, and remembers it here, so that jobs this runtime claimed before it
 * (waiting in a queue's line) are handed back rather than started. A hold that cannot be written
 * is logged and the job snoozes alone: the job itself is never lost to it. Called from handler
 * threads, on the store's pool.
 */
final class SnoozeHolds {

    /** Until when ({@link System#nanoTime()}) this runtime's own holds run, by queue and by queue and key. */
    private final Map<String, Long> queues = new ConcurrentHashMap<>();
    private final Map<List<String>, Long> keys = new ConcurrentHashMap<>();

    private static final Logger log = LoggerFactory.getLogger(SnoozeHolds.class);

    private final HoldStore holds;
    private final String workerId;

    SnoozeHolds(HoldStore holds, String workerId) {
        this.holds = holds;
        this.workerId = workerId;
    }

    void hold(RunningJob running, SnoozeJobException snooze) {
        String queue = running.job().queue();
        String key = running.job().partitionKey();
        if (snooze.scope() == SnoozeJobException.Scope.JOB) {
            return;
        }
        if (snooze.scope() == SnoozeJobException.Scope.KEY && key == null) {
            log.warn("{} snoozed with wholeKey() but has no partition key; it snoozes alone", running);
            return;
        }
        // Taken before the database's clock_timestamp(): this runtime's hold ends no later than the
        // one the claims read, so a job handed back here is never claimed again while held only here.
        long until = System.nanoTime() + snooze.delay().toNanos();
        try {
            QueueHold hold = holds.hold(queue, snooze.scope() == SnoozeJobException.Scope.KEY ? key : null,
                    snooze.delay(), snooze.getMessage(), workerId);
            if (snooze.scope() == SnoozeJobException.Scope.KEY) {
                keys.merge(List.of(queue, key), until, Math::max);
            } else {
                queues.merge(queue, until, Math::max);
            }
            // The key itself is not logged: keys may name a person (user:<email>); the dashboard shows it.
            log.info("{} holds {} until {} on every node", running,
                    hold.wholeQueue() ? "its whole queue" : "its partition key", hold.until());
        } catch (RuntimeException e) {
            log.warn("{} could not hold its {} on other nodes: {}", running,
                    snooze.scope() == SnoozeJobException.Scope.KEY ? "partition key" : "queue", e.toString());
        }
    }

    /** Whether a hold this runtime set still covers {@code job}: it must not start now. */
    boolean covers(ClaimedPosition job) {
        if (queues.isEmpty() && keys.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        Long queueUntil = queues.get(job.queue());
        if (queueUntil != null && now - queueUntil < 0) {
            return true;
        }
        Long keyUntil = job.partitionKey() == null ? null : keys.get(List.of(job.queue(), job.partitionKey()));
        if (keyUntil != null && now - keyUntil < 0) {
            return true;
        }
        queues.values().removeIf(until -> now - until >= 0);
        keys.values().removeIf(until -> now - until >= 0);
        return false;
    }
}

package io.workrow.queue.benchmark.compare;

import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.PositionEnd;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limit the database sets: Workrow's own claim statement and fenced batch end, driven
 * by {@code clients} threads with no runtime around them (no handler, no hand-off, no meters).
 * Each client claims a batch, completes it, and claims again until the queue is empty. A
 * completion skips rows another session holds for a moment (a concurrent claim's scan can); the
 * client completes those again after a millisecond, as the runtime's result writer does after
 * its backoff, so every job ends completed and the rate counts them all. Leases (five minutes)
 * cannot expire here, so a row still not completed after {@value #MAX_TRIES} tries is a fault.
 */
final class RawSqlLimit {

    private static final int MAX_TRIES = 1000;

    private static final Duration LEASE = Duration.ofMinutes(5);

    private RawSqlLimit() {
    }

    /** Drains the queue {@link WorkrowContender#QUEUE}; returns jobs/s. */
    static double drain(ClaimStore store, int clients, int batch) {
        AtomicLong completed = new AtomicLong();
        AtomicInteger clientNumber = new AtomicInteger();
        long started = System.nanoTime();
        Load.onThreads(clients, "A raw claim or completion", () -> {
            String worker = "raw-sql-" + clientNumber.incrementAndGet();
            List<ClaimedPosition> claimed = store.claim(WorkrowContender.QUEUE, worker, batch, LEASE, false);
            while (!claimed.isEmpty()) {
                List<PositionEnd> ends = claimed.stream().map(PositionEnd::completed).toList();
                for (int tries = 1; !ends.isEmpty(); tries++) {
                    if (tries > 1) {
                        if (tries > MAX_TRIES) {
                            throw new IllegalStateException(ends.size() + " jobs could not be completed: " + ends);
                        }
                        sleepMillisecond();
                    }
                    Map<PositionEnd, EndResult> results = store.endMany(ends);
                    ends = ends.stream().filter(end -> results.get(end).verdict() == EndResult.Verdict.BUSY).toList();
                    completed.addAndGet(results.values().stream().filter(EndResult::counted).count());
                }
                claimed = store.claim(WorkrowContender.QUEUE, worker, batch, LEASE, false);
            }
        });
        return completed.get() / ((System.nanoTime() - started) / 1e9);
    }

    private static void sleepMillisecond() {
        try {
            TimeUnit.MILLISECONDS.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

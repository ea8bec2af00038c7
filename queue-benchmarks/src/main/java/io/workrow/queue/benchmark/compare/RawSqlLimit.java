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
 * Each client claims a batch, completes it, and claims again until the queue is empty. The
 * figure is taken as the runtime's warm figure is: over the second half of the backlog, whose
 * claims walk the index entries the first half's claims left behind. A
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

    /** The jobs completed after the half, and their rate. */
    record SecondHalf(long jobs, double jobsPerSecond) {
    }

    /**
     * Drains the queue {@link WorkrowContender#QUEUE} of {@code 2 × half} jobs; calls {@code atHalf}
     * once, from the client whose completions pass {@code half}, and returns the jobs after that and their rate.
     */
    static SecondHalf drain(ClaimStore store, int clients, int batch, long half, Runnable atHalf) {
        if (half < (long) clients * batch) {
            // Smaller, and one round of claims could carry the count from below the half to the end.
            throw new IllegalArgumentException("the raw drain needs a half of at least clients x batch ("
                    + clients * batch + ") jobs, not " + half);
        }
        AtomicLong completed = new AtomicLong();
        AtomicInteger clientNumber = new AtomicInteger();
        AtomicLong halfNanos = new AtomicLong();
        AtomicLong completedAtHalf = new AtomicLong(-1);
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
                    long now = completed.addAndGet(results.values().stream().filter(EndResult::counted).count());
                    if (now >= half && completedAtHalf.compareAndSet(-1, now)) {
                        halfNanos.set(System.nanoTime());
                        atHalf.run();
                    }
                }
                claimed = store.claim(WorkrowContender.QUEUE, worker, batch, LEASE, false);
            }
        });
        long measured = completed.get() - completedAtHalf.get();
        if (completedAtHalf.get() < 0 || measured <= 0) {
            throw new IllegalStateException("the raw drain completed " + completed.get() + " of " + 2 * half
                    + " jobs, none of them past the half");
        }
        return new SecondHalf(measured, measured / ((System.nanoTime() - halfNanos.get()) / 1e9));
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

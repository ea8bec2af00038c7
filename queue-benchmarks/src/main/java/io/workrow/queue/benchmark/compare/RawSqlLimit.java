package io.workrow.queue.benchmark.compare;

import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limit the database sets: Workrow's own claim statement and fenced batch completion, driven
 * by {@code clients} threads with no runtime around them (no handler, no hand-off, no meters).
 * Each client claims a batch, completes it in one statement, and claims again until the queue is empty.
 */
final class RawSqlLimit {

    private RawSqlLimit() {
    }

    /** Drains the queue {@link WorkrowContender#QUEUE}; returns jobs/s. */
    static double drain(JobStore store, int clients, int batch) {
        AtomicLong completed = new AtomicLong();
        AtomicInteger clientNumber = new AtomicInteger();
        long started = System.nanoTime();
        Load.onThreads(clients, "A raw claim or completion", () -> {
            String worker = "raw-sql-" + clientNumber.incrementAndGet();
            List<ClaimedJob> claimed = store.claim(WorkrowContender.QUEUE, worker, batch, Duration.ofMinutes(5));
            while (!claimed.isEmpty()) {
                completed.addAndGet(store.completeMany(
                        claimed.stream().map(job -> new HeldJob(job.id(), job.leaseToken())).toList()).size());
                claimed = store.claim(WorkrowContender.QUEUE, worker, batch, Duration.ofMinutes(5));
            }
        });
        return completed.get() / ((System.nanoTime() - started) / 1e9);
    }
}

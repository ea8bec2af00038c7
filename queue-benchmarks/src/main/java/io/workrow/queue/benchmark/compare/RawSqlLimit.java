package io.workrow.queue.benchmark.compare;

import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limit the database sets: Workrow's own claim statement and fenced batch completion, driven
 * by {@code clients} threads with no runtime around them (no handler, no hand-off, no meters).
 * Each client claims a batch, completes it, and claims again until the queue is empty. Like the
 * runtime's result writer, it completes again the jobs a completion skipped because another
 * session held their rows for a moment (a concurrent claim's scan can), so every job ends
 * completed and the rate counts them all.
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
                List<HeldJob> held = claimed.stream().map(job -> new HeldJob(job.id(), job.leaseToken())).toList();
                while (!held.isEmpty()) {
                    Set<Long> done = store.completeMany(held);
                    completed.addAndGet(done.size());
                    held = held.stream().filter(job -> !done.contains(job.id())).toList();
                }
                claimed = store.claim(WorkrowContender.QUEUE, worker, batch, Duration.ofMinutes(5));
            }
        });
        return completed.get() / ((System.nanoTime() - started) / 1e9);
    }
}

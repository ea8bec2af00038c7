package io.workrow.queue.benchmark.compare;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/** The enqueue loads, the same for every contender enqueued from this JVM. */
final class Load {

    /** Inserts jobs {@code first} (inclusive) to {@code last} (exclusive) in one call. */
    @FunctionalInterface
    interface Chunk {
        void insert(int first, int last);
    }

    private Load() {
    }

    /** {@code jobs} calls of {@code insertOne} from {@code producers} threads; returns rows/s. */
    static double concurrently(int jobs, int producers, IntConsumer insertOne) {
        AtomicInteger next = new AtomicInteger();
        long started = System.nanoTime();
        onThreads(producers, "An enqueue", () -> {
            for (int n = next.getAndIncrement(); n < jobs; n = next.getAndIncrement()) {
                insertOne.accept(n);
            }
        });
        return jobs / ((System.nanoTime() - started) / 1e9);
    }

    /** Runs {@code loop} on {@code threads} threads at once and waits for all; {@code what} names a failure. */
    static void onThreads(int threads, String what, Runnable loop) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> loops = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                loops.add(pool.submit(loop));
            }
            for (Future<?> running : loops) {
                running.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(what + " failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    /** {@code jobs} rows, {@code chunk} per call, one call after another; returns rows/s. */
    static double inChunks(int jobs, int chunk, Chunk insert) {
        long started = System.nanoTime();
        for (int first = 0; first < jobs; first += chunk) {
            insert.insert(first, Math.min(jobs, first + chunk));
        }
        return jobs / ((System.nanoTime() - started) / 1e9);
    }

    /** One call every {@code interval}. */
    static void paced(int jobs, Duration interval, IntConsumer insertOne) {
        long next = System.nanoTime();
        for (int n = 0; n < jobs; n++) {
            insertOne.accept(n);
            next += interval.toNanos();
            LockSupport.parkNanos(next - System.nanoTime());
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
}

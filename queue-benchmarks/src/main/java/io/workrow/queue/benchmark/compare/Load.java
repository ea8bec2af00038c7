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
        ExecutorService threads = Executors.newFixedThreadPool(producers);
        long started = System.nanoTime();
        try {
            List<Future<?>> loops = new ArrayList<>();
            for (int i = 0; i < producers; i++) {
                loops.add(threads.submit(() -> {
                    for (int n = next.getAndIncrement(); n < jobs; n = next.getAndIncrement()) {
                        insertOne.accept(n);
                    }
                }));
            }
            for (Future<?> loop : loops) {
                loop.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("An enqueue failed", e.getCause());
        } finally {
            threads.shutdownNow();
        }
        return jobs / ((System.nanoTime() - started) / 1e9);
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

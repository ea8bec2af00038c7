package io.workrow.queue.worker.cluster;

import io.workrow.queue.worker.thread.BackgroundThread;
import io.workrow.queue.store.WorkerStore;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This runtime's entry in the worker registry ({@code workrow_worker}), and the buckets of each
 * of its ordered queues it owns. Every heartbeat (on the database's clock) it learns the live
 * workers of each ordered queue and recomputes its buckets by rendezvous hashing
 * ({@link BucketRing}); every node computes the same owners from the same list, so each bucket has
 * one owner. A worker is live while its heartbeat is younger than three heartbeat intervals.
 *
 * <p>When its own heartbeat has not succeeded for that long, this runtime owns nothing: the others
 * already count it dead and share its buckets. A stopping runtime leaves the registry at once.
 * During a move two workers may briefly both claim in one bucket; the ordered claim never starts a
 * key's job while another job of the key runs, wherever it runs, so that is harmless.
 */
public final class WorkerRegistry {

    private static final Logger log = LoggerFactory.getLogger(WorkerRegistry.class);

    private static final int[] NONE = new int[0];

    private final WorkerStore store;
    private final String workerId;
    private final Set<String> orderedQueues;
    private final Duration interval;
    private final Duration liveness;
    private final Consumer<String> wake;
    private final Map<String, int[]> owned = new ConcurrentHashMap<>();
    private final ScheduledExecutorService thread = BackgroundThread.named("workrow-registry");
    private volatile long lastBeatNanos;

    public WorkerRegistry(WorkerStore store, String workerId, Set<String> orderedQueues, Duration interval,
            Consumer<String> wake) {
        this.store = store;
        this.workerId = workerId;
        this.orderedQueues = Set.copyOf(orderedQueues);
        this.interval = interval;
        this.liveness = liveness(interval);
        this.wake = wake;
    }

    /** How long a worker counts as live after its last heartbeat. */
    static Duration liveness(Duration heartbeatInterval) {
        return heartbeatInterval.multipliedBy(3);
    }

    /** Beats once now (so the first claims already know their buckets), then every interval. */
    public void start() {
        beatSafely();
        thread.scheduleWithFixedDelay(this::beatSafely, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stops beating and leaves the registry, so the others take this runtime's buckets at once. */
    public void stop() {
        BackgroundThread.stop(thread);
        owned.clear();
        try {
            store.deregister(workerId);
        } catch (RuntimeException e) {
            log.warn("Could not leave the worker registry; the others count this worker dead within {}: {}", liveness,
                    e.toString());
        }
    }

    /** The buckets of {@code queue} this runtime owns now, ascending; none while its heartbeat is stale. */
    public int[] ownedBuckets(String queue) {
        // Before the first heartbeat nothing is owned; after a stale one, nothing is either.
        if (System.nanoTime() - lastBeatNanos > liveness.toNanos()) {
            return NONE;
        }
        return owned.getOrDefault(queue, NONE);
    }

    /** One heartbeat: records this worker, learns the live ones, recomputes owned buckets. */
    void beat() {
        long startedNanos = System.nanoTime();
        Map<String, Set<String>> live = store.heartbeat(workerId, orderedQueues, liveness);
        for (String queue : orderedQueues) {
            Set<String> workers = new java.util.TreeSet<>();
            live.forEach((worker, queues) -> {
                if (queues.contains(queue)) {
                    workers.add(worker);
                }
            });
            workers.add(workerId);
            int[] now = BucketRing.ownedBy(workerId, workers);
            int[] before = owned.put(queue, now);
            if (before == null || !Arrays.equals(before, now)) {
                log.info("queue={} ordered: this worker owns {} of {} buckets among {} live workers", queue, now.length,
                        BucketRing.BUCKETS, workers.size());
                if (before == null || gained(before, now)) {
                    wake.accept(queue);
                }
            }
        }
        lastBeatNanos = startedNanos;
    }

    private void beatSafely() {
        try {
            beat();
        } catch (RuntimeException e) {
            log.warn("Worker heartbeat failed; trying again in {} ms: {}", interval.toMillis(), e.toString());
        }
    }

    private static boolean gained(int[] before, int[] now) {
        return Arrays.stream(now).anyMatch(bucket -> Arrays.binarySearch(before, bucket) < 0);
    }
}

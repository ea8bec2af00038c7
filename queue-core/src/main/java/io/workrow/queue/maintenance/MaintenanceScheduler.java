package io.workrow.queue.maintenance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs maintenance tasks on fixed delays, each on a daemon thread of its own, for applications
 * without Spring's scheduling: a long pass of one task (the first prune of a large history) never
 * holds up another (the sweeper that recovers expired leases, the retirer). A failing pass is
 * logged and the task runs again at its next interval.
 */
public final class MaintenanceScheduler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MaintenanceScheduler.class);

    private final Map<MaintenanceTask, Duration> tasks = new LinkedHashMap<>();
    private final List<ScheduledExecutorService> threads = new ArrayList<>();

    /** Adds {@code task} to run every {@code interval}; call before {@link #start()}. */
    public MaintenanceScheduler every(Duration interval, MaintenanceTask task) {
        if (interval.isZero() || interval.isNegative()) {
            throw new IllegalArgumentException(task.name() + " interval must be positive, was " + interval);
        }
        tasks.put(task, interval);
        return this;
    }

    public synchronized void start() {
        tasks.forEach((task, interval) -> {
            ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread daemon = new Thread(runnable, "workrow-maintenance-" + task.name());
                daemon.setDaemon(true);
                return daemon;
            });
            threads.add(thread);
            // First pass at once: leases a crash left behind are recovered, and gauges filled, at start-up.
            thread.scheduleWithFixedDelay(() -> runSafely(task), 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        });
    }

    @Override
    public synchronized void close() {
        threads.forEach(ScheduledExecutorService::shutdownNow);
        threads.clear();
    }

    private static void runSafely(MaintenanceTask task) {
        try {
            task.runOnce();
        } catch (RuntimeException | Error e) {
            // Caught, not thrown: an executor stops scheduling a task that throws, and the sweeper
            // must not stop for good on one bad pass.
            log.warn("Maintenance task {} failed; it runs again at its next interval: {}", task.name(), e.toString());
        }
    }
}

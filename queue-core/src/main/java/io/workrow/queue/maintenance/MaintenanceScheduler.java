package io.workrow.queue.maintenance;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs maintenance tasks on fixed delays on one daemon thread, for applications without Spring's
 * scheduling. A failing pass is logged and the task runs again at its next interval.
 */
public final class MaintenanceScheduler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MaintenanceScheduler.class);

    private final Map<MaintenanceTask, Duration> tasks = new LinkedHashMap<>();
    private ScheduledExecutorService executor;

    /** Adds {@code task} to run every {@code interval}; call before {@link #start()}. */
    public MaintenanceScheduler every(Duration interval, MaintenanceTask task) {
        if (interval.isZero() || interval.isNegative()) {
            throw new IllegalArgumentException(task.name() + " interval must be positive, was " + interval);
        }
        tasks.put(task, interval);
        return this;
    }

    public synchronized void start() {
        executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "workrow-maintenance");
            thread.setDaemon(true);
            return thread;
        });
        // First pass at once: leases a crash left behind are recovered, and gauges filled, at start-up.
        tasks.forEach((task, interval) -> executor.scheduleWithFixedDelay(() -> runSafely(task),
                0, interval.toMillis(), TimeUnit.MILLISECONDS));
    }

    @Override
    public synchronized void close() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    private static void runSafely(MaintenanceTask task) {
        try {
            task.runOnce();
        } catch (RuntimeException e) {
            log.warn("Maintenance task {} failed; it runs again at its next interval: {}", task.name(), e.toString());
        }
    }
}

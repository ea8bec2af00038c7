package io.workrow.queue.worker.thread;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread each of the runtime's periodic helpers (lease keeper, scheduled job
 * promoter, worker registry) runs on, and how it is stopped: interrupted, then awaited for a few
 * seconds so a statement in flight can end.
 */
public final class BackgroundThread {

    private BackgroundThread() {
    }

    /** A single daemon thread named {@code name} that runs scheduled tasks. */
    public static ScheduledExecutorService named(String name) {
        return Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Stops the thread's tasks and waits up to five seconds for the one running to end. */
    public static void stop(ScheduledExecutorService thread) {
        thread.shutdownNow();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

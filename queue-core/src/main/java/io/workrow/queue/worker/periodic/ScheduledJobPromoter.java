package io.workrow.queue.worker.periodic;

import io.workrow.queue.worker.thread.BackgroundThread;
import io.workrow.queue.store.ClaimStore;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes scheduled jobs pending when they fall due, every poll interval: jobs due later (enqueued
 * for later, or waiting out a retry's backoff) stay out of the claim indexes until then, so a claim
 * reads only what it may take however many jobs wait ahead. Every runtime runs it; each pass skips
 * rows another runtime is promoting. Promoted queues are woken here and, through the database's
 * notification, on every other node.
 */
public final class ScheduledJobPromoter {

    private static final Logger log = LoggerFactory.getLogger(ScheduledJobPromoter.class);

    private static final int BATCH_SIZE = 1000;

    private final ClaimStore store;
    private final Duration interval;
    private final Consumer<String> wake;
    private final ScheduledExecutorService thread = BackgroundThread.named("workrow-scheduler");

    public ScheduledJobPromoter(ClaimStore store, Duration interval, Consumer<String> wake) {
        this.store = store;
        this.interval = interval;
        this.wake = wake;
    }

    public void start() {
        thread.scheduleWithFixedDelay(this::promoteSafely, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void stop() {
        BackgroundThread.stop(thread);
    }

    /** Promotes every scheduled job that is due; returns how many. */
    public int promoteDue() {
        int total = 0;
        int batch;
        do {
            Map<String, Integer> promoted = store.promoteScheduled(BATCH_SIZE);
            promoted.keySet().forEach(wake);
            batch = promoted.values().stream().mapToInt(Integer::intValue).sum();
            total += batch;
        } while (batch == BATCH_SIZE);
        return total;
    }

    private void promoteSafely() {
        try {
            int promoted = promoteDue();
            if (promoted > 0) {
                log.debug("Promoted {} scheduled jobs that fell due", promoted);
            }
        } catch (RuntimeException e) {
            log.warn("Could not promote scheduled jobs; trying again in {} ms: {}", interval.toMillis(), e.toString());
        }
    }
}

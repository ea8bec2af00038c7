package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims jobs for one queue: as many as it has free handler slots (at most a batch) in one
 * statement, then hands each to a handler thread. When the queue has nothing due it waits for a
 * wake-up (an insert notification, a freed slot) or the poll interval, whichever comes first.
 */
final class QueuePoller implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(QueuePoller.class);

    private static final long MAX_ERROR_BACKOFF_MILLIS = 10_000;

    private final HandlerRegistration registration;
    private final JobStore store;
    private final JobExecutor executor;
    private final InFlightJobs inFlight;
    private final ExecutorService handlerThreads;
    private final String workerId;
    private final Duration pollInterval;
    private final Semaphore slots;
    private final Wakeup wakeup = new Wakeup();
    private volatile boolean running = true;
    private volatile boolean waitingForSlot;

    QueuePoller(HandlerRegistration registration, JobStore store, JobExecutor executor, InFlightJobs inFlight,
            ExecutorService handlerThreads, String workerId, Duration pollInterval) {
        this.registration = registration;
        this.store = store;
        this.executor = executor;
        this.inFlight = inFlight;
        this.handlerThreads = handlerThreads;
        this.workerId = workerId;
        this.pollInterval = pollInterval;
        this.slots = new Semaphore(registration.options().concurrency());
    }

    String queue() {
        return registration.queue();
    }

    /** A hint that jobs may be due now (an insert notification or a reconnect). */
    void wake() {
        wakeup.signal();
    }

    /** Stops claiming; jobs already handed out keep running. */
    void stop() {
        running = false;
        wakeup.signal();
    }

    @Override
    public void run() {
        QueueOptions options = registration.options();
        long errorBackoff = 100;
        while (running) {
            if (!awaitFreeSlot()) {
                continue;
            }
            int wanted = Math.min(slots.availablePermits(), options.batchSize());
            List<ClaimedJob> claimed;
            try {
                claimed = store.claim(queue(), workerId, wanted, options.lease());
                errorBackoff = 100;
            } catch (RuntimeException e) {
                log.warn("queue={} claim failed, retrying in {} ms: {}", queue(), errorBackoff, e.toString());
                wakeup.sleep(errorBackoff);
                errorBackoff = Math.min(errorBackoff * 2, MAX_ERROR_BACKOFF_MILLIS);
                continue;
            }
            for (ClaimedJob job : claimed) {
                dispatch(job);
            }
            if (claimed.size() < wanted && running) {
                // Nothing more is due: sleep until an insert notification or the safety-net poll.
                wakeup.await(pollInterval);
            }
        }
    }

    /** Waits until a handler slot is free; false when woken for another reason (stop, poll). */
    private boolean awaitFreeSlot() {
        if (slots.availablePermits() > 0) {
            return true;
        }
        // Flag first, then check: a slot freed in between either is seen here or signals us.
        waitingForSlot = true;
        try {
            if (slots.availablePermits() > 0) {
                return true;
            }
            wakeup.await(pollInterval);
            return slots.availablePermits() > 0;
        } finally {
            waitingForSlot = false;
        }
    }

    private void dispatch(ClaimedJob job) {
        slots.acquireUninterruptibly();
        inFlight.add(job);
        try {
            handlerThreads.execute(() -> {
                try {
                    executor.run(job, registration);
                } finally {
                    slots.release();
                    if (waitingForSlot) {
                        wakeup.signal();
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // Shutting down between claim and dispatch: the job stays held and is released.
            slots.release();
        }
    }
}

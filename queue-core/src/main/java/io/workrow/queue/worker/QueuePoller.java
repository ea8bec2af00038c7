package io.workrow.queue.worker;

import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.ClaimedJob;
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

    private static final long FIRST_ERROR_BACKOFF_MILLIS = 100;
    private static final long MAX_ERROR_BACKOFF_MILLIS = 10_000;

    /**
     * While a queue is busy, how long a poller waits after the first slot frees for enough slots to
     * fill a whole claim. Without it a busy poller claims one or two jobs per statement (it wakes on
     * the first freed slot), and the claim statements, not the handlers, become the limit.
     */
    private static final Duration GATHER_DELAY = Duration.ofMillis(1);

    /** How often a poller looks again while its queue's failures wait to reach the circuit breaker. */
    private static final Duration VERDICT_WAIT = Duration.ofMillis(5);

    private final HandlerRegistration registration;
    private final JobClaimer claimer;
    private final JobExecutor executor;
    private final ResultWriter writer;
    private final CircuitBreakers breakers;
    private final InFlightJobs inFlight;
    private final QueueMetrics metrics;
    private final ExecutorService handlerThreads;
    private final Duration pollInterval;
    private final Semaphore slots;
    private final Wakeup wakeup = new Wakeup();
    private volatile boolean running = true;
    /** Free slots that wake the waiting poller; 0 when it is not waiting for slots. */
    private volatile int wakeAtFreeSlots;

    QueuePoller(HandlerRegistration registration, JobClaimer claimer, JobExecutor executor, ResultWriter writer,
            CircuitBreakers breakers, InFlightJobs inFlight, QueueMetrics metrics, ExecutorService handlerThreads,
            Duration pollInterval) {
        this.registration = registration;
        this.claimer = claimer;
        this.executor = executor;
        this.writer = writer;
        this.breakers = breakers;
        this.inFlight = inFlight;
        this.metrics = metrics;
        this.handlerThreads = handlerThreads;
        this.pollInterval = pollInterval;
        this.slots = new Semaphore(registration.options().concurrency());
    }

    String queue() {
        return registration.queue();
    }

    /** {@code queue xConcurrency} and the queue's patterns, for the start-up log line. */
    String describe() {
        QueueOptions options = registration.options();
        StringBuilder text = new StringBuilder(registration.queue()).append(" x").append(options.concurrency());
        if (options.ordering() != KeyOrdering.NONE) {
            text.append(" ordered/").append(options.ordering().name().toLowerCase(java.util.Locale.ROOT));
        }
        if (options.fairness().fair()) {
            text.append(" fair/").append(options.fairness().mode().name().toLowerCase(java.util.Locale.ROOT));
        }
        if (options.breaker() != null) {
            text.append(" breaker");
        }
        return text.toString();
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
        int fullClaim = Math.min(options.batchSize(), options.concurrency());
        boolean busy = false;
        long errorBackoff = FIRST_ERROR_BACKOFF_MILLIS;
        while (running) {
            try {
                busy = pollOnce(options, fullClaim, busy);
                errorBackoff = FIRST_ERROR_BACKOFF_MILLIS;
            } catch (Throwable e) {
                // Nothing may end a poller while the runtime runs: the queue would silently stop.
                log.warn("queue={} claim failed, retrying in {} ms: {}", queue(), errorBackoff, e.toString());
                busy = false;
                wakeup.sleep(errorBackoff);
                errorBackoff = Math.min(errorBackoff * 2, MAX_ERROR_BACKOFF_MILLIS);
            }
        }
    }

    /** One claim, when slots are free; returns whether the queue looked busy (a full claim came back). */
    private boolean pollOnce(QueueOptions options, int fullClaim, boolean busy) {
        if (!awaitFreeSlots(1, pollInterval)) {
            return busy;
        }
        if (busy) {
            awaitFreeSlots(fullClaim, GATHER_DELAY);
        }
        int wanted = Math.min(slots.availablePermits(), options.batchSize());
        if (wanted == 0 || !running) {
            return busy;
        }
        if (breakers.awaitsVerdict(queue())) {
            // Enough failures to open the breaker are on their way to it: claim after its verdict.
            wakeup.await(VERDICT_WAIT);
            return busy;
        }
        List<ClaimedJob> claimed = claim(wanted);
        // Dispatch before anything else can throw: a claimed job must reach a handler or be released.
        for (ClaimedJob job : claimed) {
            dispatch(job);
        }
        metrics.claimed(queue(), claimed.size());
        boolean full = claimed.size() == wanted;
        if (!full && running) {
            // Nothing more is due: sleep until an insert notification or the safety-net poll.
            wakeup.await(claimer.idleWait(pollInterval));
        }
        return full;
    }

    /**
     * One claim statement; for a queue with a circuit breaker that claimed nothing (the statement
     * refuses a breaker that is not closed), the probes its breaker grants once the cooldown is over.
     */
    private List<ClaimedJob> claim(int wanted) {
        List<ClaimedJob> claimed = claimer.claim(wanted, false);
        if (!claimed.isEmpty() || !breakers.guards(queue())) {
            return claimed;
        }
        int probes = breakers.acquireProbes(queue(), wanted);
        if (probes == 0) {
            return claimed;
        }
        List<ClaimedJob> probing = List.of();
        try {
            probing = claimer.claim(probes, true);
        } finally {
            breakers.returnProbes(queue(), probes - probing.size());
        }
        if (!probing.isEmpty()) {
            log.info("queue={} half-open circuit breaker: probing with job(s) {}", queue(),
                    probing.stream().map(ClaimedJob::id).toList());
        }
        return probing;
    }

    /**
     * Waits up to {@code timeout} until at least {@code wanted} handler slots are free; returns
     * whether any slot is free (a stop or notification may end the wait early).
     */
    private boolean awaitFreeSlots(int wanted, Duration timeout) {
        if (slots.availablePermits() >= wanted) {
            return true;
        }
        // Publish first, then check: a slot freed in between is either seen here or signals us.
        wakeAtFreeSlots = wanted;
        try {
            if (slots.availablePermits() < wanted) {
                wakeup.await(timeout);
            }
            return slots.availablePermits() > 0;
        } finally {
            wakeAtFreeSlots = 0;
        }
    }

    private void dispatch(ClaimedJob job) {
        RunningJob running = new RunningJob(job, registration);
        slots.acquireUninterruptibly();
        inFlight.add(running);
        try {
            handlerThreads.execute(() -> {
                try {
                    executor.run(running);
                } finally {
                    slots.release();
                    int wake = wakeAtFreeSlots;
                    if (wake > 0 && slots.availablePermits() >= wake) {
                        wakeup.signal();
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // Shutting down between claim and dispatch: hand the job back with its attempt.
            slots.release();
            writer.accept(JobResult.of(running, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO));
        }
    }
}

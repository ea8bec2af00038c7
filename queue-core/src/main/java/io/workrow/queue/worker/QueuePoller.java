package io.workrow.queue.worker;

import io.workrow.queue.worker.notify.Wakeup;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.ClaimedPosition;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims jobs for one queue: as many as it has room for (at most a batch) in one statement, and
 * puts them in line for the handler threads. Room is the free handler slots plus the queue's
 * prefetch: with a prefetch, jobs claimed ahead wait in line (their leases renewed like running
 * ones) while the next claim's round trip overlaps the handlers, and a handler that finishes takes
 * the next job in line on the same thread. Unless the queue fixes its prefetch, the poller sizes
 * it from its handlers' throughput before each claim ({@link AdaptivePrefetch}). When the queue has
 * nothing due the poller waits for a wake-up (an insert notification, freed room) or the poll
 * interval, whichever comes first. At stop, jobs still in line go back unstarted.
 *
 * <p>A plain queue whose prefetch adapts ({@link QueueOptions#overlapsClaims}) has a second claim
 * loop on a thread of its own, which claims only while the queue is busy (the last claim came back
 * full) and only whole batches, which the room holds when the line runs short: at tens of
 * thousands of short jobs a second one claim after another is the limit, and with two in flight
 * the database works on the next claim while the last is still being built.
 * Both loops take their room before they claim, so together they hold no more than one would.
 * The runtime allows the second loop only when the connection pool has a connection for it.
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
    /** Handlers running: one permit per handler slot. */
    private final Semaphore slots;
    /** Jobs held, in line or running, against the slots plus the prefetch. */
    private final PollerRoom room;
    /** The prefetch's size from measured throughput, or {@code null} when the queue fixes it. */
    private final AdaptivePrefetch adaptive;
    /** Claimed jobs waiting for a handler slot, in claim order. */
    private final ConcurrentLinkedQueue<RunningJob> inLine = new ConcurrentLinkedQueue<>();
    /** The poller's own claims. */
    private final ClaimLoop first = new ClaimLoop(false);
    /** The second loop's, or {@code null} when claims do not overlap. */
    private final ClaimLoop second;
    private volatile boolean running = true;
    /** Whether the last claim, by either loop, came back full: the second loop claims only then. */
    private final AtomicBoolean busy = new AtomicBoolean();

    QueuePoller(HandlerRegistration registration, JobClaimer claimer, JobExecutor executor, ResultWriter writer,
            CircuitBreakers breakers, InFlightJobs inFlight, QueueMetrics metrics, ExecutorService handlerThreads,
            Duration pollInterval, boolean overlapClaims) {
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
        QueueOptions options = registration.options();
        this.adaptive = options.adaptsPrefetch()
                ? new AdaptivePrefetch(options.mostPrefetched())
                : null;
        this.room = new PollerRoom(options.concurrency(), adaptive != null ? 0 : options.mostPrefetched());
        this.second = overlapClaims && options.overlapsClaims() ? new ClaimLoop(true) : null;
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
        if (adaptive != null) {
            text.append(" prefetch adaptive 0..").append(options.mostPrefetched());
            if (second != null) {
                text.append(" claims x2 while busy");
            }
        } else if (options.prefetch() > 0) {
            text.append(" prefetch ").append(options.prefetch());
        }
        return text.toString();
    }

    /** Connections this poller's claims may hold at once: one per claim loop. */
    int claimLoops() {
        return second != null ? 2 : 1;
    }

    /** A hint that jobs may be due now (an insert notification or a reconnect). */
    void wake() {
        first.wakeup.signal();
    }

    /** Most jobs this poller may claim ahead of free slots now. */
    int prefetch() {
        return room.capacity() - registration.options().concurrency();
    }

    /** Stops claiming; jobs already handed out keep running. */
    void stop() {
        running = false;
        first.wakeup.signal();
        if (second != null) {
            second.wakeup.signal();
        }
    }

    @Override
    public void run() {
        if (adaptive != null) {
            adaptive.begin(System.nanoTime());
        }
        Thread overlapping = null;
        if (second != null) {
            overlapping = new Thread(second::claimUntilStopped, Thread.currentThread().getName() + "-2");
            overlapping.setDaemon(true);
            overlapping.start();
        }
        try {
            first.claimUntilStopped();
        } finally {
            if (overlapping != null) {
                // Its claim in flight lines up before the line is handed back.
                joinUninterruptibly(overlapping);
            }
            handBackInLine();
        }
    }

    /** One thread's claims, with what it waits on. */
    private final class ClaimLoop {

        /** Whether this is the second loop, which claims only while the queue is busy. */
        private final boolean beside;
        private final Wakeup wakeup = new Wakeup();
        /** Free room that wakes this loop; 0 when it is not waiting for room. */
        private volatile int wakeAtFreeRoom;

        ClaimLoop(boolean beside) {
            this.beside = beside;
        }

        /**
         * Claims until the poller stops: the first loop whenever there is room, waiting for work
         * between claims; the second only while the queue is busy, sleeping while it is not.
         */
        void claimUntilStopped() {
            long errorBackoff = FIRST_ERROR_BACKOFF_MILLIS;
            while (running) {
                try {
                    if (beside && !busy.get()) {
                        wakeup.await(pollInterval);
                    } else {
                        pollOnce();
                    }
                    errorBackoff = FIRST_ERROR_BACKOFF_MILLIS;
                } catch (Throwable e) {
                    // Nothing may end a poller while the runtime runs: the queue would silently stop.
                    log.warn("queue={} {}claim failed, retrying in {} ms: {}", queue(), beside ? "second " : "",
                            errorBackoff, e.toString());
                    busy.set(false);
                    wakeup.sleep(errorBackoff);
                    errorBackoff = Math.min(errorBackoff * 2, MAX_ERROR_BACKOFF_MILLIS);
                }
            }
        }

        /** One claim, when there is room; records whether the queue looked busy (a full claim came back). */
        private void pollOnce() {
            QueueOptions options = registration.options();
            if (adaptive != null) {
                room.resize(adaptive.update(System.nanoTime()));
            }
            // The second loop claims whole batches only: part of a claim's cost is per statement, so
            // two loops sharing the room in smaller claims would spend more of the database per job
            // than one. It claims when the line runs short, which is when one loop cannot keep up.
            int whole = Math.min(options.batchSize(), room.capacity());
            if (!awaitRoom(beside ? whole : 1, pollInterval)) {
                return;
            }
            if (busy.get() && !beside) {
                awaitRoom(whole, GATHER_DELAY);
            }
            if (!running || (beside && (!busy.get() || room.free() < whole))) {
                return;
            }
            if (breakers.awaitsVerdict(queue())) {
                // Enough failures to open the breaker are on their way to it: claim after its verdict.
                wakeup.await(VERDICT_WAIT);
                return;
            }
            int wanted = room.take(options.batchSize());
            if (wanted == 0 || (beside && wanted < whole)) {
                freeRoom(wanted);
                return;
            }
            long claimSentNanos = System.nanoTime();
            List<ClaimedPosition> claimed = List.of();
            try {
                claimed = claim(wanted);
            } finally {
                freeRoom(wanted - claimed.size());
            }
            lineUp(claimed, claimSentNanos);
            startHandlers();
            metrics.claimed(queue(), claimed.size());
            boolean full = claimed.size() == wanted;
            if (full && !busy.getAndSet(true)) {
                // Busy from now on: the other loop may be waiting for that (the second) or idling (the first).
                ClaimLoop other = beside ? first : second;
                if (other != null) {
                    other.wakeup.signal();
                }
            } else if (!full) {
                busy.set(false);
            }
            if (!full && running && !beside) {
                // Nothing more is due: sleep until an insert notification or the safety-net poll.
                wakeup.await(claimer.idleWait(pollInterval));
            }
        }

        /**
         * Waits up to {@code timeout} until there is room for at least {@code wanted} jobs; returns
         * whether there is room for any (a stop or notification may end the wait early).
         */
        private boolean awaitRoom(int wanted, Duration timeout) {
            if (room.free() >= wanted) {
                return true;
            }
            // Publish first, then check: room freed in between is either seen here or signals us.
            wakeAtFreeRoom = wanted;
            try {
                if (room.free() < wanted) {
                    wakeup.await(timeout);
                }
                return room.free() > 0;
            } finally {
                wakeAtFreeRoom = 0;
            }
        }

        /** After room was freed: wakes this loop if it waits for as much as there is now. */
        private void roomFreed() {
            int wake = wakeAtFreeRoom;
            if (wake > 0 && room.free() >= wake) {
                wakeup.signal();
            }
        }
    }

    /**
     * Puts claimed jobs in line, each held against the room the claim took. Before anything else
     * can throw: a claimed job must reach a handler or be released. Room for jobs that never got
     * in line (an error part-way) is given back.
     */
    private void lineUp(List<ClaimedPosition> claimed, long claimSentNanos) {
        int lined = 0;
        try {
            for (ClaimedPosition job : claimed) {
                RunningJob held = new RunningJob(job, registration, claimSentNanos);
                inFlight.add(held);
                inLine.add(held);
                lined++;
            }
        } finally {
            freeRoom(claimed.size() - lined);
        }
    }

    /** Waits for {@code thread} to end; an interrupt is kept for later, not allowed to cut the wait short. */
    private static void joinUninterruptibly(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One claim statement; for a queue with a circuit breaker that claimed nothing (the statement
     * refuses a breaker that is not closed), the probes its breaker grants once the cooldown is over.
     */
    private List<ClaimedPosition> claim(int wanted) {
        List<ClaimedPosition> claimed = claimer.claim(wanted, false);
        if (!claimed.isEmpty() || !breakers.guards(queue())) {
            return claimed;
        }
        int probes = breakers.acquireProbes(queue(), wanted);
        if (probes == 0) {
            return claimed;
        }
        List<ClaimedPosition> probing = List.of();
        try {
            probing = claimer.claim(probes, true);
        } finally {
            breakers.returnProbes(queue(), probes - probing.size());
        }
        if (!probing.isEmpty()) {
            log.info("queue={} half-open circuit breaker: probing with job(s) {}", queue(),
                    probing.stream().map(ClaimedPosition::id).toList());
        }
        return probing;
    }

    /** Starts a handler thread for each free slot while jobs wait in line. */
    private void startHandlers() {
        while (running && !inLine.isEmpty() && slots.tryAcquire()) {
            try {
                handlerThreads.execute(this::runInLine);
            } catch (RejectedExecutionException e) {
                // Shutting down: the poller hands back what is still in line.
                slots.release();
                return;
            } catch (RuntimeException | Error e) {
                // No thread for it (out of memory, say): the slot stays free for the next attempt.
                slots.release();
                throw e;
            }
        }
    }

    /** A handler thread's work: the jobs in line, one after another, until the line is empty. */
    private void runInLine() {
        try {
            for (RunningJob job = nextInLine(); job != null; job = nextInLine()) {
                try {
                    executor.run(job);
                } finally {
                    if (adaptive != null) {
                        adaptive.finished();
                    }
                    freeRoom(1);
                }
            }
        } finally {
            slots.release();
            // A job lined up while this thread was leaving, with every slot taken, must not wait
            // for the next claim: look again now that this slot is free. After stop the poller
            // hands the line back instead.
            if (running && !inLine.isEmpty()) {
                startHandlers();
            }
        }
    }

    private RunningJob nextInLine() {
        return running ? inLine.poll() : null;
    }

    /** Gives back room for {@code jobs} and wakes a loop that waits for as much as there is now. */
    private void freeRoom(int jobs) {
        if (jobs == 0) {
            return;
        }
        room.give(jobs);
        first.roomFreed();
        if (second != null) {
            second.roomFreed();
        }
    }

    /** At stop: jobs still in line go back to pending with their attempt, never having started. */
    private void handBackInLine() {
        List<Long> handedBack = new java.util.ArrayList<>();
        for (RunningJob job = inLine.poll(); job != null; job = inLine.poll()) {
            room.give(1);
            job.markFinishing();
            handedBack.add(job.id());
            writer.accept(JobResult.of(job, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO));
        }
        if (!handedBack.isEmpty()) {
            log.info("queue={} handing back {} job(s) claimed ahead and not started, their attempts returned: {}",
                    queue(), handedBack.size(), handedBack);
        }
    }
}

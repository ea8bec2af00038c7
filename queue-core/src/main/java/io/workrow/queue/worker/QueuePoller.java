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

    /** How long a job may wait in line for a slot of a cluster-wide cap the node's share does not give it. */
    private static final Duration STARVED = Duration.ofSeconds(1);

    /** How many of the jobs handed back at stop the poller's log line names. */
    private static final int IDS_LOGGED = 20;

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
    private final Wakeup wakeup = new Wakeup();
    private volatile boolean running = true;
    /** Whether the queue has a per-key cap, by its configuration or in the database as this runtime last saw it. */
    private final java.util.function.BooleanSupplier keyCapped;
    /** This node's share of the queue's cluster-wide cap: how many of its jobs may start at once here. */
    private final CapShare share;
    /** Free room that wakes the waiting poller; 0 when it is not waiting for room. */
    private volatile int wakeAtFreeRoom;
    /** Whether the last claim came back full: the queue had more due jobs than the poller took. */
    private boolean lastClaimFull;
    /** Since when (System.nanoTime) the node's share has given it no slot while jobs wait in its line; 0: not. */
    private long starvedSince;

    QueuePoller(HandlerRegistration registration, JobClaimer claimer, JobExecutor executor, ResultWriter writer,
            CircuitBreakers breakers, InFlightJobs inFlight, QueueMetrics metrics, ExecutorService handlerThreads,
            Duration pollInterval, java.util.function.BooleanSupplier keyCapped, CapShare share) {
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
        this.keyCapped = keyCapped;
        this.share = share;
        this.adaptive = options.adaptsPrefetch()
                ? new AdaptivePrefetch(options.mostPrefetched())
                : null;
        this.room = new PollerRoom(options.concurrency(), adaptive != null ? 0 : options.mostPrefetched());
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
        } else if (options.prefetch() > 0) {
            text.append(" prefetch ").append(options.prefetch());
        }
        return text.toString();
    }

    /** A hint that jobs may be due now (an insert notification or a reconnect). */
    void wake() {
        wakeup.signal();
    }

    /** Most jobs this poller may claim ahead of free slots now. */
    int prefetch() {
        return room.capacity() - registration.options().concurrency();
    }

    /** Stops claiming; jobs already handed out keep running. */
    void stop() {
        running = false;
        wakeup.signal();
    }

    @Override
    public void run() {
        QueueOptions options = registration.options();
        if (adaptive != null) {
            adaptive.begin(System.nanoTime());
        }
        boolean busy = false;
        long errorBackoff = FIRST_ERROR_BACKOFF_MILLIS;
        while (running) {
            try {
                busy = pollOnce(options, busy);
                errorBackoff = FIRST_ERROR_BACKOFF_MILLIS;
            } catch (Throwable e) {
                // Nothing may end a poller while the runtime runs: the queue would silently stop.
                log.warn("queue={} claim failed, retrying in {} ms: {}", queue(), errorBackoff, e.toString());
                busy = false;
                wakeup.sleep(errorBackoff);
                errorBackoff = Math.min(errorBackoff * 2, MAX_ERROR_BACKOFF_MILLIS);
            }
        }
        handBackInLine();
    }

    /** One claim, when there is room; returns whether the queue looked busy (a full claim came back). */
    private boolean pollOnce(QueueOptions options, boolean busy) {
        if (adaptive != null) {
            room.resize(adaptive.update(System.nanoTime()));
        }
        share.maintain(inLine.size(), lastClaimFull);
        startHandlers();
        if (share.capped() && share.limit() == 0) {
            handBackIfStarved();
        } else {
            starvedSince = 0;
        }
        if (!awaitRoom(1, share.capped() ? CapShare.RETRY : pollInterval)) {
            return busy;
        }
        if (busy) {
            awaitRoom(Math.min(options.batchSize(), room.capacity()), GATHER_DELAY);
        }
        // Under a cluster-wide cap the line is sized for the slots this node's share gives it, with one
        // job ahead at least (a backlog then shows as a line, and the share grows). With no slot,
        // nothing (its share asks whether the queue has ready jobs instead), except where the slots
        // take turns: there one job of this node's own keys tells its share it has work.
        int wanted = Math.min(!share.capped() ? room.free()
                : share.limit() > 0 ? room.freeAhead(share.limit())
                : share.takesTurns() ? room.freeAhead(0) : 0, options.batchSize());
        if (wanted == 0 || !running) {
            if (running && share.capped()) {
                wakeup.await(CapShare.RETRY);
            }
            return busy;
        }
        if (breakers.awaitsVerdict(queue())) {
            // Enough failures to open the breaker are on their way to it: claim after its verdict.
            wakeup.await(VERDICT_WAIT);
            return busy;
        }
        long claimSentNanos = System.nanoTime();
        int forSlots = share.capped() ? room.freeSlots(share.limit()) : room.freeSlots();
        List<ClaimedPosition> claimed = claim(wanted, Math.min(wanted, forSlots));
        // Line up before anything else can throw: a claimed job must reach a handler or be released.
        for (ClaimedPosition job : claimed) {
            RunningJob held = new RunningJob(job, registration, claimSentNanos);
            room.take();
            inFlight.add(held);
            inLine.add(held);
        }
        startHandlers();
        metrics.claimed(queue(), claimed.size());
        boolean full = claimed.size() == wanted;
        lastClaimFull = full;
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
    private List<ClaimedPosition> claim(int wanted, int forSlots) {
        List<ClaimedPosition> claimed = claimer.claim(wanted, forSlots, false);
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

    /** Starts a handler thread for each free slot (within the node's share of a cap) while jobs wait in line. */
    private void startHandlers() {
        while (running && !inLine.isEmpty() && slots.tryAcquire()) {
            if (!share.tryAcquire()) {
                slots.release();
                return;
            }
            try {
                handlerThreads.execute(this::runInLine);
            } catch (RejectedExecutionException e) {
                // Shutting down: the poller hands back what is still in line.
                share.release();
                slots.release();
                return;
            } catch (RuntimeException | Error e) {
                // No thread for it (out of memory, say): the slot stays free for the next attempt.
                share.release();
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
                    freeRoom();
                }
            }
        } finally {
            share.release();
            slots.release();
            // A job lined up while this thread was leaving, with every slot taken, must not wait
            // for the next claim: look again now that this slot is free. After stop the poller
            // hands the line back instead.
            if (running && !inLine.isEmpty()) {
                startHandlers();
            }
        }
    }

    /** The next job for a handler thread; none after stop, or while more run here than the share allows. */
    private RunningJob nextInLine() {
        return running && !share.overdrawn() ? inLine.poll() : null;
    }

    private void freeRoom() {
        room.give();
        int wake = wakeAtFreeRoom;
        if ((wake > 0 && room.free() >= wake) || (inLine.isEmpty() && keyCapped.getAsBoolean())) {
            // A key-capped queue keeps no line: a slot with nothing in line claims again at once.
            wakeup.signal();
        }
    }

    /**
     * Under a cluster-wide cap, a node whose share gives it no slot hands back what waits in its line
     * once it has waited {@link #STARVED} for one: the job would otherwise wait for as long as the
     * other nodes hold the cap, while they could run it. The node claims nothing while it has no slot.
     */
    private void handBackIfStarved() {
        if (inLine.isEmpty()) {
            starvedSince = 0;
            return;
        }
        long now = System.nanoTime();
        if (starvedSince == 0) {
            starvedSince = now;
        } else if (now - starvedSince >= STARVED.toNanos()) {
            starvedSince = 0;
            List<Long> handedBack = handBackLine();
            log.debug("queue={} no slot of the cluster-wide cap here for {}: handing back {} job(s) claimed ahead: {}",
                    queue(), STARVED, handedBack.size(), handedBack);
        }
    }

    /** Jobs in line go back to pending with their attempt, never having started; returns their ids. */
    private List<Long> handBackLine() {
        List<Long> handedBack = new java.util.ArrayList<>();
        for (RunningJob job = inLine.poll(); job != null; job = inLine.poll()) {
            room.give();
            job.markFinishing();
            handedBack.add(job.id());
            writer.accept(JobResult.of(job, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO));
        }
        return handedBack;
    }

    /** At stop: jobs still in line go back to pending with their attempt, never having started. */
    private void handBackInLine() {
        List<Long> handedBack = handBackLine();
        if (!handedBack.isEmpty()) {
            // A line holds up to two claims (4,000 jobs by default): the first ids say which, the
            // result writer's DEBUG lines name every one.
            String ids = handedBack.size() <= IDS_LOGGED ? handedBack.toString()
                    : handedBack.subList(0, IDS_LOGGED) + " and " + (handedBack.size() - IDS_LOGGED) + " more";
            log.info("queue={} handing back {} job(s) claimed ahead and not started, their attempts returned: {}",
                    queue(), handedBack.size(), ids);
        }
    }
}

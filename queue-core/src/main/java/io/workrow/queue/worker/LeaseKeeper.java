package io.workrow.queue.worker;

import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.ClaimLease;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.worker.thread.BackgroundThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this runtime's leases: every {@code renewEvery} (a third of the shortest lease) one fenced
 * statement renews the lease of every run the runtime holds, so a handler may run as long as it
 * needs while a crashed or frozen JVM (which renews nothing) still loses its jobs within one
 * lease. Leases are renewed per claim (a batch of jobs under one token), each by the longest lease
 * its running jobs ask for. A claim the renewal no longer finds was lost (the sweeper gave its jobs
 * to another worker), and a position it reports dropped was cancelled: the handler is told through
 * its {@code JobContext} and interrupted, and its result is not written. A claim another session
 * keeps locked takes no renewal, but the same statement records this runtime as the holder of its
 * token, and the sweeper passes over a claim its holder still vouches for: a lock held elsewhere
 * delays a renewal, never loses a lease.
 *
 * <p>Three threads, so that nothing slow stands in a renewal's way: renewals on a connection of
 * their own whose network timeout is a renewal interval (a half-open socket costs one renewal, not
 * the lease); each queue's handler {@code timeout}, checked in memory; and the handler's own lease
 * and step writes, on another connection of their own, never inside the handler's transaction,
 * and free to wait on a row lock. A handler that ignores the interrupt one lease past its timeout
 * is let go: its position is ended as an expired lease, recovered by its queue's rule as the
 * sweeper would, while its claim's other jobs keep theirs.
 */
final class LeaseKeeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    /** How often handler timeouts are checked. */
    private static final long TIMEOUT_CHECK_MILLIS = 100;

    private final ClaimStore store;
    private final ClaimStore handlerWrites;
    private final Consumer<RunningJob> letGo;
    private final InFlightJobs inFlight;
    private final String workerId;
    private final QueueMetrics metrics;
    private final Duration renewEvery;
    private final List<CapShare> shares;
    private final ScheduledExecutorService renewals = BackgroundThread.named("workrow-lease-keeper");
    private final ScheduledExecutorService timeouts = BackgroundThread.named("workrow-handler-timeouts");
    private final ScheduledExecutorService writes = BackgroundThread.named("workrow-handler-writes");

    /**
     * @param store the renewals' statements, on a connection of their own
     * @param handlerWrites the handlers' {@code extendLease} and {@code saveStep}, on another
     * @param letGo ends the position of a run let go past its timeout (without waiting on the database)
     * @param shares this node's shares of the queues' cluster-wide caps, pushed on with the leases
     */
    LeaseKeeper(ClaimStore store, ClaimStore handlerWrites, Consumer<RunningJob> letGo, InFlightJobs inFlight,
            String workerId, QueueMetrics metrics, Duration renewEvery, java.util.Collection<CapShare> shares) {
        this.store = store;
        this.handlerWrites = handlerWrites;
        this.letGo = letGo;
        this.inFlight = inFlight;
        this.workerId = workerId;
        this.metrics = metrics;
        this.renewEvery = renewEvery;
        this.shares = List.copyOf(shares);
    }

    /** A third of the shortest lease: two renewals may fail in a row before any lease runs out. */
    static Duration renewalInterval(Duration shortestLease) {
        return shortestLease.dividedBy(3);
    }

    void start() {
        renewals.scheduleWithFixedDelay(this::renewSafely, renewEvery.toMillis(), renewEvery.toMillis(),
                TimeUnit.MILLISECONDS);
        timeouts.scheduleWithFixedDelay(this::enforceTimeouts, TIMEOUT_CHECK_MILLIS, TIMEOUT_CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    void stop() {
        BackgroundThread.stop(timeouts);
        BackgroundThread.stop(writes);
        BackgroundThread.stop(renewals);
        try {
            store.forgetLeaseHolder(workerId);
        } catch (RuntimeException e) {
            log.debug("Could not withdraw this worker's lease holder entry; it lapses with its leases: {}",
                    e.toString());
        }
    }

    /** Stops renewing these runs' leases, so they expire and the sweeper hands the jobs on. */
    void abandon(List<RunningJob> runs) {
        runs.forEach(run -> {
            if (run.abandonLease()) {
                metrics.abandoned(run.job().queue());
            }
        });
    }

    /** An operator cancelled job {@code id}: if this runtime runs it, interrupt its handler now. */
    void cancelled(long id) {
        for (RunningJob run : inFlight.runsOf(id)) {
            if (run.requestStop(RunningJob.Stop.CANCELLED)) {
                log.info("{} was cancelled; interrupting its handler", run);
            }
        }
    }

    /**
     * Runs a handler's own write ({@code extendLease}, {@code saveStep}) on the handler-writes
     * thread and connection and waits for it: it commits on its own, whatever transaction the
     * handler's thread has open, waits for no connection when the application's pool is
     * exhausted, and may wait on a row lock without holding up any renewal.
     */
    <T> T call(Function<ClaimStore, T> write) {
        Future<T> result = writes.submit(() -> write.apply(handlerWrites));
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** One renewal pass; package-private so tests can run it at once. */
    void renew() {
        List<RunningJob> held = new ArrayList<>();
        for (RunningJob job : inFlight.snapshot()) {
            if (!job.lost() && !job.leaseAbandoned()) {
                held.add(job);
            }
        }
        if (held.isEmpty()) {
            return;
        }
        Map<Long, List<RunningJob>> byClaim = new LinkedHashMap<>();
        for (RunningJob job : held) {
            byClaim.computeIfAbsent(job.job().token(), token -> new ArrayList<>()).add(job);
        }
        List<ClaimLease> claims = new ArrayList<>();
        Duration vouch = null;
        for (Map.Entry<Long, List<RunningJob>> claim : byClaim.entrySet()) {
            Duration lease = claim.getValue().stream().map(RunningJob::lease).max(Duration::compareTo).orElseThrow();
            claims.add(new ClaimLease(claim.getKey(), lease, claim.getValue().stream().map(RunningJob::job).toList()));
            vouch = vouch == null || lease.compareTo(vouch) < 0 ? lease : vouch;
        }
        long sentNanos = System.nanoTime();
        Map<Long, Set<Integer>> renewed = store.renewLeases(workerId, claims, vouch);
        renewShares(vouch);
        List<ClaimLease> missing = new ArrayList<>();
        for (ClaimLease claim : claims) {
            Set<Integer> dropped = renewed.get(claim.token());
            if (dropped == null) {
                missing.add(claim);
                continue;
            }
            for (RunningJob job : byClaim.get(claim.token())) {
                job.leaseConfirmed(sentNanos);
                if (dropped.contains(job.job().position())) {
                    stop(job, RunningJob.Stop.CANCELLED);
                }
            }
        }
        if (missing.isEmpty()) {
            return;
        }
        Set<Long> locked = store.stillHeld(missing);
        for (ClaimLease claim : missing) {
            if (locked.contains(claim.token())) {
                continue; // locked by another session for now; renewed next time
            }
            byClaim.get(claim.token()).forEach(job -> stop(job, RunningJob.Stop.LEASE_LOST));
        }
    }

    /**
     * Pushes on this node's shares of cluster-wide caps by {@code renewal}, while it holds jobs: a
     * share counts as long as the jobs that run within it keep their leases, and lapses with them.
     */
    private void renewShares(Duration renewal) {
        if (shares.stream().noneMatch(CapShare::holds)) {
            return;
        }
        long sentNanos = System.nanoTime();
        Set<String> live = store.renewShares(workerId, renewal);
        for (CapShare share : shares) {
            if (live.contains(share.queue())) {
                share.renewed(sentNanos, renewal);
            } else if (share.holds()) {
                share.lapsedInDatabase(sentNanos);
            }
        }
    }

    /**
     * Interrupts a run whose position is no longer this worker's. One whose handler is already done
     * only takes the reason, which tells the result writer what a refused end meant.
     */
    private void stop(RunningJob job, RunningJob.Stop reason) {
        if (!inFlight.holds(job)) {
            return;
        }
        if (job.finishing()) {
            job.requestStop(reason);
            return;
        }
        if (job.requestStop(reason)) {
            log.warn("{} {}; interrupting its handler, whose result will not be recorded", job,
                    reason == RunningJob.Stop.CANCELLED ? "was cancelled" : "lost its lease");
        }
    }

    /**
     * One renewal pass; a pass that fails is tried again at once, on a new connection (the kept one
     * is replaced after a failure), not a renewal interval later: a renewal that hung for its
     * network timeout and then waited another interval would reach past the lease.
     */
    private void renewSafely() {
        for (int attempt = 1; attempt <= 2; attempt++) {
            try {
                renew();
                return;
            } catch (RuntimeException e) {
                log.warn("Could not renew the leases of {} jobs; {}: {}", inFlight.size(),
                        attempt == 1 ? "trying again at once" : "trying again in " + renewEvery.toMillis() + " ms",
                        e.toString());
            }
        }
    }

    /**
     * Interrupts handlers past their queue's timeout, and lets go of those still running one lease
     * after it: a handler that ignores the interrupt must not hold its job for as long as it runs.
     */
    void enforceTimeouts() {
        for (RunningJob job : inFlight.snapshot()) {
            Duration timeout = job.timeout();
            if (timeout == null || !job.handlerRunning()) {
                continue;
            }
            Duration ran = job.runningFor();
            if (ran.compareTo(timeout) > 0 && job.requestStop(RunningJob.Stop.TIMED_OUT)) {
                log.warn("{} ran past its timeout of {}; interrupting its handler", job, timeout);
            }
            Duration letGoAfter = timeout.plus(job.registration().options().lease());
            if (ran.compareTo(letGoAfter) > 0 && job.tryAbandonLease()) {
                metrics.abandoned(job.job().queue());
                log.error("{} handler still runs {} after its timeout of {}, ignoring the interrupt; it is let go:"
                        + " its lease ends as expired and the job is handed on by its queue's backoff while this"
                        + " handler may still run", job, ran.minus(timeout), timeout);
                letGo.accept(job);
            }
        }
    }
}

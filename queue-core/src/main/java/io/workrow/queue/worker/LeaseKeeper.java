package io.workrow.queue.worker;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobHolder;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.LeaseRenewal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this runtime's leases: every {@code renewEvery} (a third of the shortest lease) one fenced
 * statement renews the lease of every run the runtime holds, so a handler may run as long as it
 * needs while a crashed or frozen JVM (which renews nothing) still loses its jobs within one
 * lease. A renewal that no longer matches a job means it was lost (the sweeper gave it to another
 * worker) or cancelled: the handler is told through its {@code JobContext} and interrupted, and
 * its result is not written. A row another session keeps locked takes no renewal, but the same
 * statement records this runtime as the holder of its token, and the sweeper passes over a job
 * its holder still vouches for: a lock held elsewhere delays a renewal, never loses a lease.
 *
 * <p>Three threads, so that nothing slow stands in a renewal's way: renewals on a connection of
 * their own whose network timeout is a renewal interval (a half-open socket costs one renewal, not
 * the lease); each queue's handler {@code timeout}, checked in memory; and the handler's own lease
 * and step writes, on another connection of their own, never inside the handler's transaction,
 * and free to wait on a row lock. A handler that ignores the interrupt one lease past its timeout
 * is let go: its lease is no longer renewed, so it expires and the sweeper hands the job on.
 */
final class LeaseKeeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    /** How often handler timeouts are checked. */
    private static final long TIMEOUT_CHECK_MILLIS = 100;

    private final JobStore store;
    private final JobStore handlerWrites;
    private final InFlightJobs inFlight;
    private final String workerId;
    private final QueueMetrics metrics;
    private final Duration renewEvery;
    private final ScheduledExecutorService renewals = BackgroundThread.named("workrow-lease-keeper");
    private final ScheduledExecutorService timeouts = BackgroundThread.named("workrow-handler-timeouts");
    private final ScheduledExecutorService writes = BackgroundThread.named("workrow-handler-writes");

    /**
     * @param store the renewals' statements, on a connection of their own
     * @param handlerWrites the handlers' {@code extendLease} and {@code saveStep}, on another
     */
    LeaseKeeper(JobStore store, JobStore handlerWrites, InFlightJobs inFlight, String workerId, QueueMetrics metrics,
            Duration renewEvery) {
        this.store = store;
        this.handlerWrites = handlerWrites;
        this.inFlight = inFlight;
        this.workerId = workerId;
        this.metrics = metrics;
        this.renewEvery = renewEvery;
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
    <T> T call(Function<JobStore, T> write) {
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
        long sentNanos = System.nanoTime();
        Set<HeldJob> renewed = store.renewLeases(workerId, held.stream()
                .map(job -> new LeaseRenewal(job.id(), job.job().leaseToken(), job.lease())).toList());
        // Matched by run: an old run of a job claimed here again shares its id, not its token.
        for (RunningJob job : held) {
            if (renewed.contains(job.held())) {
                job.leaseConfirmed(sentNanos);
            }
        }
        List<RunningJob> missing = held.stream().filter(job -> !renewed.contains(job.held())).toList();
        if (missing.isEmpty()) {
            return;
        }
        Map<Long, JobHolder> holders = store.holders(missing.stream().map(RunningJob::id).toList());
        for (RunningJob job : missing) {
            JobHolder holder = holders.get(job.id());
            if (holder != null && holder.heldBy(job.job().leaseToken())) {
                continue; // locked by another session for now; renewed next time
            }
            if (job.finishing() || !inFlight.holds(job)) {
                continue; // its handler is done: the result writer tells a lost lease from a written result
            }
            boolean cancelled = holder != null && holder.status() == JobStatus.CANCELLED;
            if (job.requestStop(cancelled ? RunningJob.Stop.CANCELLED : RunningJob.Stop.LEASE_LOST)) {
                log.warn("{} {}; interrupting its handler, whose result will not be recorded", job,
                        cancelled ? "was cancelled" : "lost its lease (now " + (holder == null ? "deleted"
                                : holder.status().columnValue()) + ")");
            }
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
            Duration timeout = job.registration().options().timeout();
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
                log.error("{} handler still runs {} after its timeout of {}, ignoring the interrupt; its lease is"
                        + " no longer renewed and expires within {}, then the sweeper hands the job on while this"
                        + " handler may still run", job, ran.minus(timeout), timeout, job.lease());
            }
        }
    }
}

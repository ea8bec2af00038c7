package io.workrow.queue.worker;

import io.workrow.queue.JobStatus;
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
 * statement renews the lease of every job the runtime holds, so a handler may run as long as it
 * needs while a crashed or frozen JVM (which renews nothing) still loses its jobs within one
 * lease. A renewal that no longer matches a job means it was lost (the sweeper gave it to another
 * worker) or cancelled: the handler is told through its {@code JobContext} and interrupted, and
 * its result is not written. The same thread enforces each queue's handler {@code timeout} and
 * runs the handler's own lease and step writes, so they always run on a connection of their own,
 * never inside the handler's transaction.
 */
final class LeaseKeeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    /** How often handler timeouts are checked. */
    private static final long TIMEOUT_CHECK_MILLIS = 100;

    private final JobStore store;
    private final InFlightJobs inFlight;
    private final Duration renewEvery;
    private final ScheduledExecutorService thread = BackgroundThread.named("workrow-lease-keeper");
    /** Jobs whose leases are no longer renewed: their handlers outlived shutdown. */
    private final Set<Long> abandoned = java.util.concurrent.ConcurrentHashMap.newKeySet();

    LeaseKeeper(JobStore store, InFlightJobs inFlight, Duration renewEvery) {
        this.store = store;
        this.inFlight = inFlight;
        this.renewEvery = renewEvery;
    }

    /** A third of the shortest lease: two renewals may fail in a row before any lease runs out. */
    static Duration renewalInterval(Duration shortestLease) {
        return shortestLease.dividedBy(3);
    }

    void start() {
        thread.scheduleWithFixedDelay(this::renewSafely, renewEvery.toMillis(), renewEvery.toMillis(),
                TimeUnit.MILLISECONDS);
        thread.scheduleWithFixedDelay(this::enforceTimeouts, TIMEOUT_CHECK_MILLIS, TIMEOUT_CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    void stop() {
        BackgroundThread.stop(thread);
    }

    /** Stops renewing these jobs' leases, so they expire and the sweeper hands the jobs on. */
    void abandon(List<RunningJob> jobs) {
        jobs.forEach(job -> abandoned.add(job.id()));
    }

    /** An operator cancelled job {@code id}: if this runtime runs it, interrupt its handler now. */
    void cancelled(long id) {
        RunningJob job = inFlight.get(id);
        if (job != null && job.requestStop(RunningJob.Stop.CANCELLED)) {
            log.info("{} was cancelled; interrupting its handler", job);
        }
    }

    /**
     * Runs a handler's own write ({@code extendLease}, {@code saveStep}) on the keeper's thread and
     * connection and waits for it: it commits on its own, whatever transaction the handler's thread
     * has open, and waits for no connection when the application's pool is exhausted.
     */
    <T> T call(Function<JobStore, T> write) {
        Future<T> result = thread.submit(() -> write.apply(store));
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
            if (!job.lost() && !abandoned.contains(job.id())) {
                held.add(job);
            }
        }
        if (held.isEmpty()) {
            return;
        }
        long sentNanos = System.nanoTime();
        Set<Long> renewed = store.renewLeases(held.stream()
                .map(job -> new LeaseRenewal(job.id(), job.job().leaseToken(), job.lease())).toList());
        for (RunningJob job : held) {
            if (renewed.contains(job.id())) {
                job.leaseConfirmed(sentNanos);
            }
        }
        List<RunningJob> missing = held.stream().filter(job -> !renewed.contains(job.id())).toList();
        if (missing.isEmpty()) {
            return;
        }
        Map<Long, JobHolder> holders = store.holders(missing.stream().map(RunningJob::id).toList());
        for (RunningJob job : missing) {
            JobHolder holder = holders.get(job.id());
            if (holder != null && holder.heldBy(job.job().leaseToken())) {
                continue; // locked by another session for now; renewed next time
            }
            if (job.finishing() || inFlight.get(job.id()) == null) {
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

    private void renewSafely() {
        try {
            renew();
        } catch (RuntimeException e) {
            log.warn("Could not renew the leases of {} jobs; trying again in {} ms: {}", inFlight.size(),
                    renewEvery.toMillis(), e.toString());
        }
    }

    private void enforceTimeouts() {
        for (RunningJob job : inFlight.snapshot()) {
            Duration timeout = job.registration().options().timeout();
            if (timeout != null && job.handlerRunning() && job.runningFor().compareTo(timeout) > 0
                    && job.requestStop(RunningJob.Stop.TIMED_OUT)) {
                log.warn("{} ran past its timeout of {}; interrupting its handler", job, timeout);
            }
        }
    }
}

package io.workrow.queue.worker;

import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobLeaseLostException;
import io.workrow.queue.SnoozeJobException;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.payload.PayloadDecodingException;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one claimed job on a handler thread: reads its payload into the handler's type, calls the
 * handler with no transaction open (or inside the handler's own, for transactional handlers), and
 * classifies what happened as a {@link JobResult}. It writes nothing itself: the result goes to
 * the {@link ResultWriter}, whose queue is bounded, so the handler's slot stays taken until the
 * writer has room for the result. The run is observed by the {@link JobObserver} and closed with
 * the outcome as recorded.
 */
final class JobExecutor {

    private static final Logger log = LoggerFactory.getLogger(JobExecutor.class);

    private final ClaimStore store;
    private final PayloadCodec codec;
    private final ResultWriter writer;
    private final LeaseKeeper keeper;
    private final ErrorDescriber errors;
    private final JobObserver observer;
    private final InFlightJobs inFlight;
    private final JobResults results;
    private final SnoozeHolds holds;

    JobExecutor(ClaimStore store, PayloadCodec codec, int maxResultBytes, ResultWriter writer, LeaseKeeper keeper,
            ErrorDescriber errors, JobObserver observer, InFlightJobs inFlight, SnoozeHolds holds) {
        this.store = store;
        this.holds = holds;
        this.inFlight = inFlight;
        this.codec = codec;
        this.writer = writer;
        this.keeper = keeper;
        this.errors = UserCode.guarded(errors);
        this.observer = UserCode.guarded(observer);
        this.results = new JobResults(codec, maxResultBytes, this.errors);
    }

    /**
     * Runs {@code running} in the calling thread and hands its result to the writer; the future
     * completes once the writer has recorded it and the run's observation is closed.
     */
    CompletableFuture<RecordedOutcome> run(RunningJob running) {
        ClaimedPosition job = running.job();
        MDC.put("job", Long.toString(job.id()));
        MDC.put("queue", job.queue());
        MDC.put("attempt", job.attempt() + "/" + job.maxAttempts());
        // Guarded: neither the observer nor the describer can keep a run from its outcome.
        JobObserver.Run observed = observer.start(job);
        try {
            JobResult result = decide(running);
            if (result.cause() != null) {
                observed.error(result.cause());
            }
            observed.leave();
            // Blocks while the writer's bounded queue is full: the slot stays taken until then.
            return writer.accept(result).whenComplete((recorded, error) -> {
                observed.outcome(recorded != null ? recorded.outcome() : JobOutcome.UNRECORDED);
                observed.close();
            });
        } catch (Throwable e) {
            // The last resort: no outcome can reach the writer (a bug of ours). The run leaves the
            // in-flight set, so its lease is no longer renewed and the sweeper hands the job on.
            inFlight.remove(running);
            log.error("{} could not hand its result to the writer ({}); it runs again after its lease expires",
                    running, UserCode.text(e));
            return CompletableFuture.failedFuture(e);
        } finally {
            MDC.remove("job");
            MDC.remove("queue");
            MDC.remove("attempt");
        }
    }

    /**
     * What to record for the run: {@link #execute}'s verdict, or a failed attempt when something
     * outside the handler threw (a bug of ours, an {@code Error} while classifying): the job must
     * reach the writer, which alone ends its in-flight entry.
     */
    private JobResult decide(RunningJob running) {
        try {
            return execute(running);
        } catch (Throwable e) {
            if (running.handlerRunning()) {
                running.detach();
            }
            running.markFinishing();
            log.error("{} could not be run or classified ({}); recording a failed attempt", running, UserCode.text(e));
            return JobResult.failed(running, JobResult.Kind.FAIL, errors.describe(e), retryDelay(running),
                    running.runningFor(), e);
        }
    }

    private JobResult execute(RunningJob running) {
        HandlerRegistration registration = running.registration();
        // A job may wait in its queue's line after the claim (prefetch): what happened to it
        // meanwhile decides before its handler starts, not after.
        if (running.stopReason() == RunningJob.Stop.SHUTDOWN) {
            running.markFinishing();
            return JobResult.of(running, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO);
        }
        if (running.lost()) {
            // Cancelled, or its lease expired and another worker may hold it now: never started here.
            running.markFinishing();
            return JobResult.of(running, JobResult.Kind.ABANDON, Duration.ZERO);
        }
        if (running.leaseRunningOut()) {
            // Its lease may be gone before a renewal can tell: starting it could run it beside its
            // next owner. Handed back, fenced: back to pending if the lease is still this worker's.
            log.warn("{} waited in line {} since its lease was last confirmed, past two thirds of it; handing it"
                    + " back unstarted", running, running.sinceLeaseConfirmed());
            running.markFinishing();
            return JobResult.of(running, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO);
        }
        if (holds.covers(running.job())) {
            // Claimed before this runtime's handler held the queue or key: it waits out the hold.
            running.markFinishing();
            return JobResult.of(running, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO);
        }
        if (running.job().pastDeadline()) {
            // Judged from before the claim was sent, so never later than the database's clock says.
            running.markFinishing();
            return JobResult.failed(running, JobResult.Kind.PAST_DEADLINE,
                    "expired: its deadline (expiresAt) passed before it started", Duration.ZERO, Duration.ZERO, null);
        }
        Object payload;
        try {
            payload = codec.decode(running.job().payloadJson(), registration.payloadType());
        } catch (PayloadDecodingException e) {
            running.markFinishing();
            return JobResult.failed(running, JobResult.Kind.UNREADABLE, errors.describe(e), Duration.ZERO,
                    Duration.ZERO, e);
        } catch (Throwable e) {
            // Not a verdict on the payload (a codec bug, a stack overflow, out of memory): a failed
            // attempt, retried after the backoff, dead when the attempts are spent.
            running.markFinishing();
            log.warn("{} payload codec failed: {}", running, UserCode.text(e));
            return JobResult.failed(running, JobResult.Kind.FAIL, errors.describe(e), retryDelay(running),
                    Duration.ZERO, e);
        }
        JobRunContext context = new JobRunContext(running, keeper, store, codec);
        running.attach(Thread.currentThread());
        try {
            if (registration.isTransactional()) {
                registration.transaction().execute(() -> {
                    Object value = registration.function().apply(payload, context);
                    // Encoded inside: a result that cannot be stored rolls the handler's work back.
                    completeInTransaction(running, results.encode(value));
                });
                running.detach();
                return JobResult.of(running, JobResult.Kind.COMPLETED_IN_TRANSACTION, running.runningFor());
            }
            Object value = registration.function().apply(payload, context);
            running.detach();
            Duration handlerTime = running.runningFor();
            try {
                return JobResult.completed(running, results.encode(value), handlerTime);
            } catch (JobResults.UnstorableResultException e) {
                return JobResult.failed(running, JobResult.Kind.DISCARD, e.getMessage(), Duration.ZERO, handlerTime,
                        e);
            }
        } catch (Throwable e) {
            Duration handlerTime = running.runningFor();
            running.detach();
            return classify(running, e, handlerTime);
        }
    }

    private JobResult classify(RunningJob running, Throwable error, Duration handlerTime) {
        RunningJob.Stop stop = running.stopReason();
        if (running.lost() || error instanceof JobLeaseLostException) {
            return JobResult.of(running, JobResult.Kind.ABANDON, handlerTime);
        }
        if (stop == RunningJob.Stop.SHUTDOWN) {
            log.info("{} interrupted by shutdown: {}", running, UserCode.text(error));
            return JobResult.of(running, JobResult.Kind.RELEASE, handlerTime);
        }
        if (error instanceof JobResults.UnstorableResultException) {
            return JobResult.failed(running, JobResult.Kind.DISCARD, error.getMessage(), Duration.ZERO, handlerTime,
                    error);
        }
        if (error instanceof SnoozeJobException snooze) {
            return snoozed(running, snooze, handlerTime);
        }
        if (error instanceof DiscardJobException) {
            return JobResult.failed(running, JobResult.Kind.DISCARD, errors.describe(error), Duration.ZERO,
                    handlerTime, error);
        }
        Throwable recorded = error;
        if (stop == RunningJob.Stop.TIMED_OUT) {
            recorded = new TimeoutException("handler ran longer than "
                    + (running.job().timeout() != null ? "its own" : "the queue's") + " timeout of " + running.timeout()
                    + " and was interrupted (" + UserCode.text(error) + ")");
        }
        if (error instanceof VirtualMachineError) {
            log.error("{} handler failed with {}", running, UserCode.text(error));
        }
        return JobResult.failed(running, JobResult.Kind.FAIL, errors.describe(recorded), retryDelay(running),
                handlerTime, recorded);
    }

    /**
     * A snooze, or, past the queue's max-snoozes, a failed attempt: a job that only ever snoozes
     * must not circle forever.
     */
    private JobResult snoozed(RunningJob running, SnoozeJobException snooze, Duration handlerTime) {
        int most = running.registration().options().maxSnoozes();
        if (running.job().snoozes() >= most) {
            String error = "snoozed " + running.job().snoozes() + " times, the most workrow.queues."
                    + running.job().queue() + ".max-snoozes allows (" + most + "); this snooze counts as a failure";
            return JobResult.failed(running, JobResult.Kind.FAIL, error, retryDelay(running), handlerTime, snooze);
        }
        holds.hold(running, snooze);
        return JobResult.failed(running, JobResult.Kind.SNOOZE, snooze.getMessage(), snooze.delay(), handlerTime,
                null);
    }

    private static Duration retryDelay(RunningJob running) {
        return running.registration().options().backoff().delayAfter(running.job().attempt());
    }

    /** The fenced completion inside a transactional handler's transaction; throwing rolls it all back. */
    private void completeInTransaction(RunningJob running, String resultJson) {
        if (!store.completeInTransaction(running.job(), resultJson)) {
            running.requestStop(RunningJob.Stop.LEASE_LOST);
            throw new JobLeaseLostException(running + " lost its lease before its transaction committed;"
                    + " the handler's writes were rolled back");
        }
    }
}

package io.workrow.queue.worker;

import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobLeaseLostException;
import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.payload.PayloadDecodingException;
import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one claimed job: reads its payload into the handler's type, calls the handler with no
 * transaction open (or inside the handler's own, for transactional handlers), and turns the
 * outcome into the job's next state. Successes go to the {@link JobCompleter} to be written in
 * batches; failures and discards are written at once. A handler cut short by shutdown is left
 * alone, so the runtime can hand its job back. Each outcome is reported to {@link QueueMetrics}
 * once it is recorded, and the run is observed by the {@link JobObserver}.
 */
final class JobExecutor {

    private static final Logger log = LoggerFactory.getLogger(JobExecutor.class);

    private final JobStore store;
    private final PayloadCodec codec;
    private final JobCompleter completer;
    private final InFlightJobs inFlight;
    private final ErrorDescriber errors;
    private final QueueMetrics metrics;
    private final JobObserver observer;
    private final BooleanSupplier stopping;

    JobExecutor(JobStore store, PayloadCodec codec, JobCompleter completer, InFlightJobs inFlight,
            ErrorDescriber errors, QueueMetrics metrics, JobObserver observer, BooleanSupplier stopping) {
        this.store = store;
        this.codec = codec;
        this.completer = completer;
        this.inFlight = inFlight;
        this.errors = errors;
        this.metrics = metrics;
        this.observer = observer;
        this.stopping = stopping;
    }

    void run(ClaimedJob job, HandlerRegistration registration) {
        MDC.put("job", Long.toString(job.id()));
        MDC.put("queue", job.queue());
        MDC.put("attempt", job.attempt() + "/" + job.maxAttempts());
        try (JobObserver.Run observed = observer.start(job)) {
            Object payload;
            try {
                payload = codec.decode(job.payloadJson(), registration.payloadType());
            } catch (PayloadDecodingException e) {
                observed.error(e);
                observed.outcome(discardUnreadable(job, errors.describe(e)));
                return;
            }
            long started = System.nanoTime();
            try {
                observed.outcome(invoke(job, registration, payload, started));
            } catch (DiscardJobException e) {
                observed.error(e);
                observed.outcome(discard(job, errors.describe(e), since(started)));
            } catch (JobLeaseLostException e) {
                inFlight.remove(job.id());
                metrics.handled(job.queue(), JobOutcome.LEASE_LOST, since(started));
                observed.outcome(JobOutcome.LEASE_LOST);
                log.info("job={} queue={} attempt={}/{} stopped: {}", job.id(), job.queue(), job.attempt(),
                        job.maxAttempts(), e.getMessage());
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                if (stopping.getAsBoolean() && (e instanceof InterruptedException || Thread.currentThread().isInterrupted())) {
                    // Cut short by shutdown: not a failure of the job. The runtime releases it.
                    log.info("job={} queue={} interrupted by shutdown", job.id(), job.queue());
                    return;
                }
                observed.error(e);
                observed.outcome(fail(job, registration.options().backoff(), e, since(started)));
            }
        } finally {
            MDC.remove("job");
            MDC.remove("queue");
            MDC.remove("attempt");
        }
    }

    /** Runs the handler; returns SUCCESS for a recorded or queued completion. */
    private JobOutcome invoke(ClaimedJob job, HandlerRegistration registration, Object payload, long started)
            throws Exception {
        JobRunContext context = new JobRunContext(job, store);
        if (registration.isTransactional()) {
            registration.transaction().execute(() -> {
                registration.handler().handle(payload, context);
                completeInTransaction(job);
            });
            inFlight.remove(job.id());
            metrics.handled(job.queue(), JobOutcome.SUCCESS, since(started));
        } else {
            registration.handler().handle(payload, context);
            // The completer reports SUCCESS or LEASE_LOST once the batch is written.
            completer.submit(job, since(started));
        }
        return JobOutcome.SUCCESS;
    }

    /** The fenced completion inside a transactional handler's transaction; throwing rolls it all back. */
    private void completeInTransaction(ClaimedJob job) {
        if (store.completeMany(List.of(held(job))).isEmpty()) {
            throw new JobLeaseLostException("job=" + job.id() + " queue=" + job.queue() + " lost its lease before"
                    + " its transaction committed; the handler's writes were rolled back");
        }
    }

    private JobOutcome fail(ClaimedJob job, RetryBackoff backoff, Throwable error, Duration handlerTime) {
        Duration delay = backoff.delayAfter(job.attempt());
        Optional<JobStatus> status;
        try {
            status = store.fail(held(job), errors.describe(error), delay);
        } catch (RuntimeException e) {
            unrecorded(job, "failure", e);
            return JobOutcome.FAILURE;
        }
        inFlight.remove(job.id());
        if (status.isEmpty()) {
            metrics.handled(job.queue(), JobOutcome.LEASE_LOST, handlerTime);
            log.info("job={} queue={} attempt={}/{} failed after this worker lost its lease; not recorded: {}",
                    job.id(), job.queue(), job.attempt(), job.maxAttempts(), error.toString());
            return JobOutcome.LEASE_LOST;
        }
        metrics.handled(job.queue(), JobOutcome.FAILURE, handlerTime);
        if (status.get() == JobStatus.DEAD) {
            metrics.retired(job.queue());
            log.warn("job={} queue={} attempt={}/{} failed and has no attempts left; it is dead",
                    job.id(), job.queue(), job.attempt(), job.maxAttempts(), error);
        } else {
            log.warn("job={} queue={} attempt={}/{} failed, retry in {} ms: {}", job.id(), job.queue(),
                    job.attempt(), job.maxAttempts(), delay.toMillis(), error.toString());
        }
        return JobOutcome.FAILURE;
    }

    private JobOutcome discard(ClaimedJob job, String reason, Duration handlerTime) {
        JobOutcome outcome = sendToDead(job, reason);
        metrics.handled(job.queue(), outcome, handlerTime);
        return outcome;
    }

    private JobOutcome discardUnreadable(ClaimedJob job, String reason) {
        JobOutcome outcome = sendToDead(job, reason);
        if (outcome == JobOutcome.DISCARDED) {
            metrics.unreadable(job.queue());
        }
        return outcome;
    }

    /** Writes the discard; DISCARDED when recorded, LEASE_LOST when the lease was gone. */
    private JobOutcome sendToDead(ClaimedJob job, String reason) {
        boolean discarded;
        try {
            discarded = store.discard(held(job), reason);
        } catch (RuntimeException e) {
            unrecorded(job, "discard", e);
            return JobOutcome.DISCARDED;
        }
        inFlight.remove(job.id());
        if (!discarded) {
            log.info("job={} queue={} could not be discarded: this worker lost its lease", job.id(), job.queue());
            return JobOutcome.LEASE_LOST;
        }
        metrics.retired(job.queue());
        log.warn("job={} queue={} attempt={}/{} discarded, now dead: {}", job.id(), job.queue(),
                job.attempt(), job.maxAttempts(), reason);
        return JobOutcome.DISCARDED;
    }

    /** The outcome could not be written; the job stays held, so shutdown or the sweeper returns it. */
    private static void unrecorded(ClaimedJob job, String outcome, RuntimeException e) {
        log.warn("job={} queue={} attempt={}/{} {} could not be recorded; it runs again after its lease"
                + " expires: {}", job.id(), job.queue(), job.attempt(), job.maxAttempts(), outcome, e.toString());
    }

    private static Duration since(long startedNanos) {
        return Duration.ofNanos(System.nanoTime() - startedNanos);
    }

    private static HeldJob held(ClaimedJob job) {
        return new HeldJob(job.id(), job.leaseToken());
    }
}

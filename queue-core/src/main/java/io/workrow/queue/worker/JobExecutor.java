package io.workrow.queue.worker;

import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobLeaseLostException;
import io.workrow.queue.JobStatus;
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
 * transaction open, and turns the outcome into the job's next state. Successes go to the
 * {@link JobCompleter} to be written in batches; failures and discards are written at once. A
 * handler cut short by shutdown is left alone, so the runtime can hand its job back.
 */
final class JobExecutor {

    private static final Logger log = LoggerFactory.getLogger(JobExecutor.class);

    private final JobStore store;
    private final PayloadCodec codec;
    private final JobCompleter completer;
    private final InFlightJobs inFlight;
    private final ErrorDescriber errors;
    private final BooleanSupplier stopping;

    JobExecutor(JobStore store, PayloadCodec codec, JobCompleter completer, InFlightJobs inFlight,
            ErrorDescriber errors, BooleanSupplier stopping) {
        this.store = store;
        this.codec = codec;
        this.completer = completer;
        this.inFlight = inFlight;
        this.errors = errors;
        this.stopping = stopping;
    }

    void run(ClaimedJob job, HandlerRegistration registration) {
        MDC.put("job", Long.toString(job.id()));
        MDC.put("queue", job.queue());
        MDC.put("attempt", job.attempt() + "/" + job.maxAttempts());
        try {
            Object payload;
            try {
                payload = codec.decode(job.payloadJson(), registration.payloadType());
            } catch (PayloadDecodingException e) {
                discard(job, errors.describe(e));
                return;
            }
            JobRunContext context = new JobRunContext(job, store);
            if (registration.isTransactional()) {
                registration.transaction().execute(() -> {
                    registration.handler().handle(payload, context);
                    completeInTransaction(job);
                });
                inFlight.remove(job.id());
            } else {
                registration.handler().handle(payload, context);
                completer.submit(job);
            }
        } catch (DiscardJobException e) {
            discard(job, errors.describe(e));
        } catch (JobLeaseLostException e) {
            inFlight.remove(job.id());
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
            fail(job, registration.options().backoff(), e);
        } finally {
            MDC.remove("job");
            MDC.remove("queue");
            MDC.remove("attempt");
        }
    }

    /** The fenced completion inside a transactional handler's transaction; throwing rolls it all back. */
    private void completeInTransaction(ClaimedJob job) {
        if (store.completeMany(List.of(held(job))).isEmpty()) {
            throw new JobLeaseLostException("job=" + job.id() + " queue=" + job.queue() + " lost its lease before"
                    + " its transaction committed; the handler's writes were rolled back");
        }
    }

    private void fail(ClaimedJob job, RetryBackoff backoff, Throwable error) {
        Duration delay = backoff.delayAfter(job.attempt());
        Optional<JobStatus> status;
        try {
            status = store.fail(held(job), errors.describe(error), delay);
        } catch (RuntimeException e) {
            unrecorded(job, "failure", e);
            return;
        }
        inFlight.remove(job.id());
        if (status.isEmpty()) {
            log.info("job={} queue={} attempt={}/{} failed after this worker lost its lease; not recorded: {}",
                    job.id(), job.queue(), job.attempt(), job.maxAttempts(), error.toString());
        } else if (status.get() == JobStatus.DEAD) {
            log.warn("job={} queue={} attempt={}/{} failed and has no attempts left; it is dead",
                    job.id(), job.queue(), job.attempt(), job.maxAttempts(), error);
        } else {
            log.warn("job={} queue={} attempt={}/{} failed, retry in {} ms: {}", job.id(), job.queue(),
                    job.attempt(), job.maxAttempts(), delay.toMillis(), error.toString());
        }
    }

    private void discard(ClaimedJob job, String reason) {
        boolean discarded;
        try {
            discarded = store.discard(held(job), reason);
        } catch (RuntimeException e) {
            unrecorded(job, "discard", e);
            return;
        }
        inFlight.remove(job.id());
        if (discarded) {
            log.warn("job={} queue={} attempt={}/{} discarded, now dead: {}", job.id(), job.queue(),
                    job.attempt(), job.maxAttempts(), reason);
        } else {
            log.info("job={} queue={} could not be discarded: this worker lost its lease", job.id(), job.queue());
        }
    }

    /** The outcome could not be written; the job stays held, so shutdown or the sweeper returns it. */
    private static void unrecorded(ClaimedJob job, String outcome, RuntimeException e) {
        log.warn("job={} queue={} attempt={}/{} {} could not be recorded; it runs again after its lease"
                + " expires: {}", job.id(), job.queue(), job.attempt(), job.maxAttempts(), outcome, e.toString());
    }

    private static HeldJob held(ClaimedJob job) {
        return new HeldJob(job.id(), job.leaseToken());
    }
}

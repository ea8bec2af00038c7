package io.workrow.queue.worker;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobFailure;
import io.workrow.queue.store.JobHolder;
import io.workrow.queue.store.JobRelease;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one exit for every outcome. Handler threads hand their {@link JobResult} here; the queue of
 * results waiting to be written is bounded, so when the writer cannot keep up (a database outage)
 * handler threads wait to hand theirs over, their slots stay taken and no more jobs are claimed:
 * memory stays bounded and nothing is claimed that cannot be answered for. Until its outcome is
 * written a job stays in flight and its lease is renewed. One thread writes the results in batches: completions in one fenced
 * statement, failures and discards in another, shutdown releases in a third; every commit waits
 * for a WAL flush, and one flush for hundreds of jobs is far cheaper than hundreds. A batch is
 * written when it is full or its oldest result has waited {@code maxDelay}.
 *
 * <p>Each job keeps its own token in the statement. A row the statement did not match either lost
 * its lease (logged, counted as {@code lease_lost} or {@code cancelled}) or was locked by another
 * session (tried again shortly, while the lease keeper goes on renewing it). A database error
 * retries the whole batch with backoff. This is the only place that ends an in-flight entry and
 * reports outcomes to the meters and, for queues with a circuit breaker, to their breakers: one
 * statement per guarded queue per batch, with its successes and failures in recorded order.
 */
final class ResultWriter {

    private static final Logger log = LoggerFactory.getLogger(ResultWriter.class);

    private static final long FIRST_RETRY_MILLIS = 50;
    private static final long MAX_RETRY_MILLIS = 5_000;
    /** Retries of a locked row before the lock is worth a warning: 750 ms of waiting. */
    private static final int LONG_LOCK_TRIES = 4;
    private static final long IDLE_POLL_MILLIS = 100;

    private final JobStore store;
    private final InFlightJobs inFlight;
    private final QueueMetrics metrics;
    private final CircuitBreakers breakers;
    private final Consumer<String> recordedFor;
    private final int maxBatch;
    private final long maxDelayNanos;
    private final LinkedBlockingQueue<Pending> submitted = new LinkedBlockingQueue<>();
    /** Room for results accepted and not yet recorded, those waiting to be tried again included. */
    private final Semaphore room;
    /** Results to try again (locked rows, database errors); touched only by the writer thread. */
    private final List<Pending> deferred = new ArrayList<>();
    private volatile boolean stopping;
    private volatile boolean finished;
    private volatile long giveUpAtNanos = Long.MAX_VALUE;
    private Thread thread;
    /** Outcomes of guarded queues in the batch being written; touched only by the writer thread. */
    private CircuitBreakers.Tally tally;
    /** Queues with an outcome recorded in the batch being written; touched only by the writer thread. */
    private final Set<String> recordedQueues = new java.util.HashSet<>();

    /**
     * @param recordedFor told, after each batch, of every queue that had an outcome recorded in it
     *     (an ordered queue's key is free for its next job only once its job's outcome is written)
     * @param capacity the most results accepted and not yet recorded (waiting, or to be tried
     *     again) before handler threads must wait to hand theirs over
     */
    ResultWriter(JobStore store, InFlightJobs inFlight, QueueMetrics metrics, CircuitBreakers breakers,
            Consumer<String> recordedFor, int maxBatch, Duration maxDelay, int capacity) {
        this.room = new Semaphore(Math.max(1, capacity));
        this.store = store;
        this.inFlight = inFlight;
        this.metrics = metrics;
        this.breakers = breakers;
        this.recordedFor = recordedFor;
        this.maxBatch = maxBatch;
        this.maxDelayNanos = maxDelay.toNanos();
    }

    void start() {
        thread = new Thread(this::loop, "workrow-result-writer");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Hands a result over, waiting (uninterruptibly) while the queue is full; the future completes
     * with the outcome and the job's new status once it is recorded.
     */
    CompletableFuture<RecordedOutcome> accept(JobResult result) {
        Pending pending = new Pending(result);
        breakers.accepted(result.job().job().queue(), result.kind());
        boolean queued = false;
        boolean interrupted = false;
        while (!queued && !finished) {
            try {
                queued = room.tryAcquire(IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS) && submitted.add(pending);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (!queued) {
            unrecorded(pending); // a handler that outlived shutdown: nobody writes any more
        } else if (finished) {
            giveUp(); // queued just as the writer stopped
        }
        return pending.recorded;
    }

    /**
     * Writes what is still queued, retrying until {@code timeout} has passed, then stops. Results
     * that could not be written by then are left to their leases, which expire.
     */
    void stop(Duration timeout) {
        giveUpAtNanos = System.nanoTime() + timeout.toNanos();
        stopping = true;
        if (thread == null) {
            return;
        }
        try {
            thread.join(timeout.toMillis() + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        try {
            writeUntilStopped();
        } finally {
            finished = true;
            giveUp();
        }
    }

    private void writeUntilStopped() {
        while (true) {
            try {
                List<Pending> batch = nextBatch();
                if (!batch.isEmpty()) {
                    write(batch);
                } else if (stopping && submitted.isEmpty() && deferred.isEmpty()) {
                    return;
                }
                if (stopping && System.nanoTime() - giveUpAtNanos > 0) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                // A bug must not end the only writer: every waiting handler would hang.
                log.error("Result writer failed; it carries on", e);
            }
        }
    }

    /** Deferred results that are due, then new ones, up to a batch, waiting at most the batching delay. */
    private List<Pending> nextBatch() throws InterruptedException {
        List<Pending> batch = new ArrayList<>(maxBatch);
        long now = System.nanoTime();
        long nextDeferred = Long.MAX_VALUE;
        for (var iterator = deferred.iterator(); iterator.hasNext() && batch.size() < maxBatch; ) {
            Pending pending = iterator.next();
            if (pending.notBeforeNanos - now <= 0) {
                batch.add(pending);
                iterator.remove();
            } else {
                nextDeferred = Math.min(nextDeferred, pending.notBeforeNanos - now);
            }
        }
        if (batch.isEmpty()) {
            long waitNanos = Math.min(TimeUnit.MILLISECONDS.toNanos(IDLE_POLL_MILLIS), nextDeferred);
            Pending first = submitted.poll(waitNanos, TimeUnit.NANOSECONDS);
            if (first == null) {
                return batch;
            }
            batch.add(first);
        }
        long deadline = batch.get(0).submittedNanos + maxDelayNanos;
        while (batch.size() < maxBatch) {
            long remaining = deadline - System.nanoTime();
            Pending next = remaining > 0 ? submitted.poll(remaining, TimeUnit.NANOSECONDS) : submitted.poll();
            if (next == null) {
                break;
            }
            batch.add(next);
        }
        return batch;
    }

    private void write(List<Pending> batch) {
        tally = breakers.tally();
        try {
            writeKinds(batch);
        } finally {
            if (!tally.isEmpty()) {
                breakers.record(tally, store.breakers());
            }
            recordedQueues.forEach(recordedFor);
            recordedQueues.clear();
        }
    }

    private void writeKinds(List<Pending> batch) {
        List<Pending> completions = new ArrayList<>();
        List<Pending> failures = new ArrayList<>();
        List<Pending> releases = new ArrayList<>();
        for (Pending pending : batch) {
            switch (pending.result.kind()) {
                case COMPLETE -> completions.add(pending);
                case FAIL, DISCARD, UNREADABLE -> failures.add(pending);
                case RELEASE, RELEASE_UNSTARTED -> releases.add(pending);
                case COMPLETED_IN_TRANSACTION -> finish(pending, JobOutcome.SUCCESS, JobStatus.COMPLETED);
                case ABANDON -> finish(pending, pending.result.job().stopReason() == RunningJob.Stop.CANCELLED
                        ? JobOutcome.CANCELLED : JobOutcome.LEASE_LOST, null);
            }
        }
        List<Pending> unmatched = new ArrayList<>();
        if (!completions.isEmpty()) {
            try {
                Set<HeldJob> completed = store.completeMany(completions.stream().map(p -> p.job().held()).toList());
                for (Pending pending : completions) {
                    if (completed.contains(pending.job().held())) {
                        finish(pending, JobOutcome.SUCCESS, JobStatus.COMPLETED);
                    } else {
                        unmatched.add(pending);
                    }
                }
            } catch (RuntimeException e) {
                retryLater(completions, "complete", e);
            }
        }
        if (!failures.isEmpty()) {
            try {
                Map<HeldJob, JobStatus> recorded = store.failMany(failures.stream().map(ResultWriter::failure).toList());
                matchStatuses(failures, recorded, unmatched);
            } catch (RuntimeException e) {
                retryLater(failures, "record the failure of", e);
            }
        }
        if (!releases.isEmpty()) {
            try {
                Map<HeldJob, JobStatus> released = store.releaseMany(releases.stream().map(ResultWriter::release).toList());
                matchStatuses(releases, released, unmatched);
            } catch (RuntimeException e) {
                retryLater(releases, "release", e);
            }
        }
        if (!unmatched.isEmpty()) {
            sortOut(unmatched);
        }
    }

    /** Matched by run: two results of one job (an old run and its re-claim) share an id, not a token. */
    private void matchStatuses(List<Pending> written, Map<HeldJob, JobStatus> statuses, List<Pending> unmatched) {
        for (Pending pending : written) {
            JobStatus status = statuses.get(pending.job().held());
            if (status == null) {
                unmatched.add(pending);
            } else {
                finish(pending, outcomeOf(pending.result.kind()), status);
            }
        }
    }

    /** Rows a statement did not match: still ours but locked (try again), or lost. */
    private void sortOut(List<Pending> unmatched) {
        Map<Long, JobHolder> holders;
        try {
            holders = store.holders(unmatched.stream().map(p -> p.job().id()).toList());
        } catch (RuntimeException e) {
            retryLater(unmatched, "check the holders of", e);
            return;
        }
        for (Pending pending : unmatched) {
            JobHolder holder = holders.get(pending.job().id());
            if (holder != null && holder.heldBy(pending.job().job().leaseToken())) {
                // A concurrent claim's scan holds a row for a moment, routinely when several
                // workers share a queue (a few jobs in a thousand with two JVMs draining one); only a
                // lock held past the first retries is news to an operator.
                if (pending.tries == 0) {
                    log.debug("{} is locked by another session; its outcome is written when the lock is released",
                            pending.job());
                } else if (pending.tries == LONG_LOCK_TRIES) {
                    log.warn("{} is still locked by another session after {} ms; its outcome is written when the"
                            + " lock is released", pending.job(), lockedForMillis(LONG_LOCK_TRIES));
                }
                defer(pending);
            } else {
                finish(pending, holder != null && holder.status() == JobStatus.CANCELLED
                        ? JobOutcome.CANCELLED : JobOutcome.LEASE_LOST, null);
            }
        }
    }

    private void retryLater(Collection<Pending> pendings, String action, RuntimeException e) {
        Pending first = pendings.iterator().next();
        log.warn("Could not {} {} jobs (try {}), trying again in {} ms: {}", action, pendings.size(), first.tries + 1,
                retryDelay(first.tries), e.toString());
        pendings.forEach(this::defer);
    }

    private void defer(Pending pending) {
        pending.notBeforeNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retryDelay(pending.tries));
        pending.tries++;
        deferred.add(pending);
    }

    private static long retryDelay(int tries) {
        return Math.min(MAX_RETRY_MILLIS, FIRST_RETRY_MILLIS << Math.min(tries, 16));
    }

    /** How long a row has been waited on after {@code tries} retries. */
    private static long lockedForMillis(int tries) {
        long waited = 0;
        for (int i = 0; i < tries; i++) {
            waited += retryDelay(i);
        }
        return waited;
    }

    /** Shutdown could not wait longer: what is left stays held until its lease expires. */
    private synchronized void giveUp() {
        List<Pending> left = new ArrayList<>(deferred);
        deferred.clear();
        submitted.drainTo(left);
        left.forEach(pending -> {
            room.release();
            unrecorded(pending);
        });
    }

    private void unrecorded(Pending pending) {
        breakers.dropped(pending.job().job().queue(), pending.result.kind());
        log.warn("{} {} could not be recorded before shutdown; it runs again after its lease expires",
                pending.job(), pending.result.kind().name().toLowerCase(java.util.Locale.ROOT));
        metrics.handled(pending.job().job().queue(), JobOutcome.UNRECORDED, pending.result.handlerTime());
        pending.recorded.complete(new RecordedOutcome(JobOutcome.UNRECORDED, null, pending.result));
    }

    private void finish(Pending pending, JobOutcome outcome, JobStatus status) {
        JobResult result = pending.result;
        ClaimedJob job = result.job().job();
        try {
            inFlight.remove(result.job());
            if (result.kind() == JobResult.Kind.UNREADABLE && outcome == JobOutcome.DISCARDED) {
                metrics.unreadable(job.queue());
            } else {
                metrics.handled(job.queue(), outcome, result.handlerTime());
            }
            if (status == JobStatus.DEAD) {
                metrics.retired(job.queue());
            }
            tally.ended(job.queue(), result.kind(), outcome);
            recordedQueues.add(job.queue());
            describe(result, outcome, status);
        } catch (RuntimeException | Error e) {
            // A meter, or the log line formatting a handler's exception whose getMessage throws:
            // the outcome is written, so its room and its future are settled all the same.
            log.warn("{} {}: reporting it failed: {}", result.job(), outcome.name().toLowerCase(java.util.Locale.ROOT),
                    e.getClass().getName());
        } finally {
            room.release();
            pending.recorded.complete(new RecordedOutcome(outcome, status, result));
        }
    }

    private static void describe(JobResult result, JobOutcome outcome, JobStatus status) {
        RunningJob job = result.job();
        switch (outcome) {
            case SUCCESS -> log.debug("{} completed", job);
            case FAILURE -> {
                if (status == JobStatus.DEAD) {
                    log.warn("{} failed and has no attempts left; it is dead", job, result.cause());
                } else {
                    log.warn("{} failed, retry in {} ms: {}", job, result.retryDelay().toMillis(), result.error());
                }
            }
            case DISCARDED -> log.warn("{} discarded, now dead: {}", job, result.error());
            case RELEASED -> {
                if (result.kind() == JobResult.Kind.RELEASE_UNSTARTED) {
                    // The poller logs the line it hands back once; one line a job would bury it.
                    log.debug("{} handed back unstarted; now {}", job, status.columnValue());
                } else {
                    log.info("{} released at shutdown; now {}", job, status.columnValue());
                }
            }
            case CANCELLED -> log.info("{} was cancelled while this worker held it; nothing recorded", job);
            case LEASE_LOST -> log.info(result.kind() == JobResult.Kind.ABANDON
                    ? "{} stopped after this worker lost its lease; nothing recorded"
                    : "{} finished after this worker lost its lease; its outcome was not recorded", job);
            default -> {
            }
        }
    }

    private static JobOutcome outcomeOf(JobResult.Kind kind) {
        return switch (kind) {
            case FAIL -> JobOutcome.FAILURE;
            case DISCARD, UNREADABLE -> JobOutcome.DISCARDED;
            case RELEASE, RELEASE_UNSTARTED -> JobOutcome.RELEASED;
            default -> JobOutcome.SUCCESS;
        };
    }

    private static JobFailure failure(Pending pending) {
        JobResult result = pending.result;
        HeldJob held = result.job().held();
        return new JobFailure(held.id(), held.leaseToken(), result.error(), result.retryDelay(),
                result.kind() != JobResult.Kind.FAIL);
    }

    private static JobRelease release(Pending pending) {
        HeldJob held = pending.job().held();
        return new JobRelease(held.id(), held.leaseToken(), pending.result.kind() == JobResult.Kind.RELEASE_UNSTARTED);
    }

    private static final class Pending {

        final JobResult result;
        final long submittedNanos = System.nanoTime();
        final CompletableFuture<RecordedOutcome> recorded = new CompletableFuture<>();
        long notBeforeNanos;
        int tries;

        Pending(JobResult result) {
            this.result = result;
        }

        RunningJob job() {
            return result.job();
        }
    }
}

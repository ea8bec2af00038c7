package io.workrow.queue.worker;

import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.BreakerStore;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.PositionEnd;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
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
 * <p>Each job's end presents its fence (its claim's token and its position). An end the statement
 * refused lost its lease (logged, counted as {@code lease_lost} or {@code cancelled}); one whose
 * claim was locked by another session is sent again shortly, while the lease keeper goes on
 * renewing it; one an earlier send already recorded (its reply lost) counts as written. A database error
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

    private final ClaimStore store;
    private final BreakerStore breakerStore;
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
    ResultWriter(ClaimStore store, BreakerStore breakerStore, InFlightJobs inFlight, QueueMetrics metrics,
            CircuitBreakers breakers, Consumer<String> recordedFor, int maxBatch, Duration maxDelay, int capacity) {
        this.room = new Semaphore(Math.max(1, capacity));
        this.store = store;
        this.breakerStore = breakerStore;
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
     * Ends a run that is let go ({@link JobResult.Kind#LET_GO}) without waiting for room: the
     * timeout check that calls this must not wait on the database.
     */
    void letGo(RunningJob run) {
        Pending pending = new Pending(JobResult.letGo(run));
        pending.holdsRoom = room.tryAcquire();
        if (finished) {
            pending.releaseRoom();
            return; // stopped: its lease expires with the rest of this runtime's
        }
        submitted.add(pending);
        if (finished) {
            giveUp(); // queued just as the writer stopped
        }
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
                breakers.record(tally, breakerStore);
            }
            recordedQueues.forEach(recordedFor);
            recordedQueues.clear();
        }
    }

    private void writeKinds(List<Pending> batch) {
        List<Pending> written = new ArrayList<>();
        List<PositionEnd> ends = new ArrayList<>();
        Set<Fence> fences = new HashSet<>();
        for (Pending pending : batch) {
            switch (pending.result.kind()) {
                case COMPLETED_IN_TRANSACTION -> finish(pending, JobOutcome.SUCCESS, JobStatus.COMPLETED);
                case ABANDON -> finish(pending, pending.result.job().stopReason() == RunningJob.Stop.CANCELLED
                        ? JobOutcome.CANCELLED : JobOutcome.LEASE_LOST, null);
                default -> {
                    if (fences.add(pending.job().fence())) {
                        written.add(pending);
                        ends.add(end(pending.result));
                    } else {
                        // a let-go and its handler's own result: one end of a position per statement
                        pending.notBeforeNanos = System.nanoTime();
                        deferred.add(pending);
                    }
                }
            }
        }
        if (ends.isEmpty()) {
            return;
        }
        Map<PositionEnd, EndResult> results;
        try {
            results = store.endMany(ends);
        } catch (RuntimeException e) {
            retryLater(written, "record the outcome of", e);
            return;
        }
        for (int i = 0; i < written.size(); i++) {
            Pending pending = written.get(i);
            EndResult result = results.get(ends.get(i));
            if (result == null) {
                log.error("{}: the end statement said nothing of it; sending it again", pending.job());
                defer(pending);
                continue;
            }
            switch (result.verdict()) {
                case ACCEPTED, ACCEPTED_BEFORE -> finish(pending, outcomeOf(pending.result.kind()), result.status());
                case BUSY -> locked(pending);
                case REFUSED -> finish(pending, result.status() == JobStatus.CANCELLED
                        || pending.job().stopReason() == RunningJob.Stop.CANCELLED
                        ? JobOutcome.CANCELLED : JobOutcome.LEASE_LOST, null);
            }
        }
    }

    /**
     * A claim another session holds locked for a moment (a concurrent claim's scan, an end being
     * written, a renewal), routinely when several workers share a queue; only a lock held past the
     * first retries is news to an operator.
     */
    private void locked(Pending pending) {
        if (pending.tries == 0) {
            log.debug("{} is locked by another session; its outcome is written when the lock is released",
                    pending.job());
        } else if (pending.tries == LONG_LOCK_TRIES) {
            log.warn("{} is still locked by another session after {} ms; its outcome is written when the"
                    + " lock is released", pending.job(), lockedForMillis(LONG_LOCK_TRIES));
        }
        defer(pending);
    }

    private static PositionEnd end(JobResult result) {
        ClaimedPosition job = result.job().job();
        return switch (result.kind()) {
            case COMPLETE -> PositionEnd.completed(job, result.resultJson());
            case FAIL -> PositionEnd.failed(job, result.error(), result.retryDelay());
            case DISCARD, UNREADABLE -> PositionEnd.discarded(job, result.error());
            case RELEASE -> PositionEnd.interrupted(job);
            case RELEASE_UNSTARTED -> PositionEnd.released(job);
            case SNOOZE -> PositionEnd.snoozed(job, result.error(), result.retryDelay());
            case PAST_DEADLINE -> PositionEnd.pastDeadline(job, result.error());
            case LET_GO -> PositionEnd.expired(job, result.retryDelay(),
                    result.job().registration().options().maxLeaseExpiries());
            case COMPLETED_IN_TRANSACTION, ABANDON -> throw new IllegalArgumentException(
                    result.kind() + " writes no end");
        };
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
            pending.releaseRoom();
            unrecorded(pending);
        });
    }

    private void unrecorded(Pending pending) {
        if (pending.result.kind() == JobResult.Kind.LET_GO) {
            pending.recorded.complete(new RecordedOutcome(JobOutcome.UNRECORDED, null, pending.result));
            return; // its lease expires with the rest of this runtime's
        }
        breakers.dropped(pending.job().job().queue(), pending.result.kind());
        log.warn("{} {} could not be recorded before shutdown; it runs again after its lease expires",
                pending.job(), pending.result.kind().name().toLowerCase(java.util.Locale.ROOT));
        metrics.handled(pending.job().job().queue(), JobOutcome.UNRECORDED, pending.result.handlerTime());
        pending.recorded.complete(new RecordedOutcome(JobOutcome.UNRECORDED, null, pending.result));
    }

    private void finish(Pending pending, JobOutcome outcome, JobStatus status) {
        JobResult result = pending.result;
        ClaimedPosition job = result.job().job();
        try {
            inFlight.remove(result.job());
            if (result.kind() == JobResult.Kind.LET_GO) {
                // counted when it was let go; its handler's own result is reported when it comes
                recordedQueues.add(job.queue());
                if (status == null) {
                    log.info("{} let go: its position had already ended", result.job());
                } else if (status == JobStatus.RUNNING) {
                    log.info("{} let go: its lease is no longer renewed, and the sweeper recovers it once it"
                            + " runs out", result.job());
                } else {
                    log.info("{} let go: its lease ended as expired; now {}", result.job(), status.columnValue());
                    if (status == JobStatus.DEAD) {
                        metrics.retired(job.queue());
                    }
                }
                return;
            }
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
            pending.releaseRoom();
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
                // No status when an earlier send was recorded and its reply lost (ACCEPTED_BEFORE).
                String now = status == null ? "recorded by an earlier send" : "now " + status.columnValue();
                if (result.kind() == JobResult.Kind.RELEASE_UNSTARTED) {
                    // The poller logs the line it hands back once; one line a job would bury it.
                    log.debug("{} handed back unstarted; {}", job, now);
                } else {
                    log.info("{} released at shutdown; {}", job, now);
                }
            }
            case CANCELLED -> log.info("{} was cancelled while this worker held it; nothing recorded", job);
            case SNOOZED -> log.debug("{} snoozed for {} ms, no attempt spent", job, result.retryDelay().toMillis());
            case EXPIRED -> log.info("{} not started: {}; it is cancelled", job, result.error());
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
            case SNOOZE -> JobOutcome.SNOOZED;
            case PAST_DEADLINE -> JobOutcome.EXPIRED;
            default -> JobOutcome.SUCCESS;
        };
    }

    private final class Pending {

        final JobResult result;
        final long submittedNanos = System.nanoTime();
        final CompletableFuture<RecordedOutcome> recorded = new CompletableFuture<>();
        long notBeforeNanos;
        int tries;
        /** Whether this result took room (a let-go may not have). */
        boolean holdsRoom = true;

        Pending(JobResult result) {
            this.result = result;
        }

        void releaseRoom() {
            if (holdsRoom) {
                holdsRoom = false;
                room.release();
            }
        }

        RunningJob job() {
            return result.job();
        }
    }
}

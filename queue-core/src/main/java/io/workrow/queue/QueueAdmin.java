package io.workrow.queue;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Inspection and operations for the people who run the queues: what is waiting, who holds what,
 * what died and why, and putting dead jobs back to work. Everything here is also plain SQL on
 * {@code workrow_job}.
 */
public interface QueueAdmin {

    /** How many of the newest dead jobs {@link #deadErrorGroups} groups. */
    int DEAD_GROUP_SAMPLE = 10_000;

    /**
     * Per queue: open work (pending, due, scheduled, running), dead jobs, how long the oldest due
     * job has waited, and whether the queue is paused. A queue is listed when it has open or dead
     * jobs, is paused, or a runtime has declared it (its row in {@code workrow_queue_rule}, kept
     * until deleted by hand). Read from the indexes of open and dead jobs only, so that completed
     * and cancelled history costs it nothing.
     */
    List<QueueStats> stats();

    /** Running jobs with their owner and lease, oldest claim first; {@code queue} null for all. */
    List<JobSummary> runningJobs(String queue, int limit);

    /**
     * Dead jobs with their last error, newest first. {@code queue} null for all queues;
     * {@code errorText} null for any error, else a case-insensitive substring of {@code last_error}.
     */
    List<JobSummary> deadJobs(String queue, String errorText, int limit);

    /**
     * Dead jobs grouped by queue and kind of error, largest group first; {@code queue} null for
     * all queues. The kind is {@code last_error} up to its first colon (the exception's class with
     * the default error describer); the engine's "lease expired ..." errors are one kind, and jobs
     * without an error the kind {@code ""}. {@link #retryDeadGroup} retries one group.
     *
     * <p>Every kind is listed (up to a thousand kinds), but jobs are counted only among the newest
     * {@value #DEAD_GROUP_SAMPLE} dead jobs (of {@code queue}, when given), so that the read stays
     * short however many have died. When more are dead, a group's {@link DeadErrorGroup#jobs()}
     * is its share of those newest ones, 0 for a kind none of them has, while
     * {@link #retryDeadGroup} and {@link #cancelDeadGroup} still act on the whole group.
     */
    List<DeadErrorGroup> deadErrorGroups(String queue, int limit);

    /** The most jobs {@link #dependencies(long)} lists on each side. */
    int DEPENDENCIES_LISTED = 100;

    /** Jobs waiting for other jobs to end, lowest id first; {@code queue} null for all. */
    List<JobSummary> waitingJobs(String queue, int limit);

    /** What job {@code id} waits for and what waits for it, with their statuses; empty when no job has this id. */
    Optional<JobDependencies> dependencies(long id);

    /** One job's whole row, payload included; empty when no job has this id. */
    Optional<JobDetail> job(long id);

    /** A batch's members by status and its callbacks; empty when no batch has this id (or it is past retention). */
    Optional<BatchStatus> batch(long id);

    /**
     * Jobs completed and dead per queue and minute, by the database's clock, from the minute of
     * {@code since} (at most a day back) to now, oldest first; minutes in which a queue finished
     * nothing are left out. It reads every job finished in the window, so a poller asks only for
     * the minutes it has not seen yet.
     */
    List<FinishedPerMinute> finishedPerMinute(Instant since);

    /**
     * Puts these dead jobs of {@code queue} back to pending with fresh attempts, due now; ids of
     * other queues are left alone. Returns how many moved.
     */
    int retryDead(String queue, Collection<Long> ids);

    /** Retries every dead job of {@code queue} whose last error contains {@code errorText}. */
    int retryDead(String queue, String errorText);

    /**
     * Retries the dead jobs of {@code queue} whose error is of this kind, exactly as
     * {@link #deadErrorGroups} groups them ({@link DeadErrorGroup#error()}).
     */
    int retryDeadGroup(String queue, String errorKind);

    /**
     * Cancels these dead jobs of {@code queue}: they leave the dead list as cancelled (kept with
     * their last error until retention prunes cancelled jobs) and never run. Ids of other queues,
     * or of jobs that are not dead, are left alone. Returns how many moved.
     */
    int cancelDead(String queue, Collection<Long> ids);

    /** Cancels the dead jobs of {@code queue} whose error is of this kind, as {@link #deadErrorGroups} groups them. */
    int cancelDeadGroup(String queue, String errorKind);

    /**
     * Cancels a pending or running job of {@code queue}. A running handler is interrupted at once
     * (its {@code JobContext} reports it cancelled) and its result is not recorded. Returns false
     * when the job was already finished, does not exist or belongs to another queue.
     */
    boolean cancel(String queue, long id);

    /**
     * Pauses a queue on every node sharing the database, across restarts: no node claims its
     * jobs until it is resumed. Jobs already running finish normally.
     */
    void pause(String queue, String reason);

    /** Resumes a paused queue and wakes its workers; false when it was not paused. */
    boolean resume(String queue);

    /** The paused queues. */
    List<String> pausedQueues();

    /**
     * The live holds: queues, or partition keys of them, that no node claims until the hold's end
     * ({@code SnoozeJobException.wholeQueue()/wholeKey()}, or {@link #hold}).
     */
    List<QueueHold> holds();

    /**
     * Holds {@code queue}, or only its {@code partitionKey} when not {@code null}, on every node
     * for {@code duration}: no node claims what it covers until then (running jobs finish). An
     * existing hold ends at the later of the two times.
     */
    QueueHold hold(String queue, String partitionKey, Duration duration, String reason);

    /**
     * Ends the hold of {@code queue} (or of its {@code partitionKey}) now and wakes the queue's
     * workers; false when there was none.
     */
    boolean releaseHold(String queue, String partitionKey);

    /**
     * The queues with a concurrency cap across every node, cluster-wide or per key
     * ({@code workrow.queues.<queue>.global-concurrency} or {@code key-concurrency}, or set by hand),
     * each with its jobs claimed now on every node.
     */
    List<ConcurrencyCap> concurrencyCaps();

    /**
     * Caps {@code queue} at {@code cap} jobs claimed at once across every node, in place of its
     * configured cap until cleared. Stored in the database: runtimes whose configuration caps the
     * queue apply it from their next claim, the others from their next look at the caps (within
     * two seconds).
     */
    void setGlobalConcurrency(String queue, int cap, String reason);

    /**
     * Clears the cap set by hand on {@code queue}, so its configured cap (or none) applies again;
     * false when none was set by hand.
     */
    boolean clearGlobalConcurrency(String queue);

    /**
     * Caps {@code queue} at {@code cap} jobs of one partition key claimed at once across every node,
     * in place of its configured {@code key-concurrency} until cleared. Stored in the database and
     * applied as {@link #setGlobalConcurrency} is; while it is in force the queue's claims take no
     * prefetch. Ordered and fair queues ignore it: they have their own per-key rules.
     */
    void setKeyConcurrency(String queue, int cap, String reason);

    /**
     * Clears the per-key cap set by hand on {@code queue}, so its configured one (or none) applies
     * again; false when none was set by hand.
     */
    boolean clearKeyConcurrency(String queue);

    /** Every queue's circuit breaker that has a row: guarded queues, and any opened by hand. */
    List<BreakerStatus> breakers();

    /** Every recurring job any node has declared, by name, with its last and next tick. */
    List<RecurringStatus> recurringJobs();

    /**
     * Opens the circuit breaker of {@code queue} by hand, on every node, until it is closed by
     * hand: no node claims its jobs and no probes are let through. Works on any queue.
     */
    void openBreaker(String queue, String reason);

    /**
     * Closes the circuit breaker of {@code queue}, clears its failure count and wakes the queue's
     * workers; false when the queue has no breaker row.
     */
    boolean closeBreaker(String queue);

    /**
     * The per-key settings of fair queues, by queue and key: {@code queue} null for every queue,
     * at most {@code limit} rows.
     */
    List<FairnessSetting> fairnessSettings(String queue, int limit);

    /**
     * Sets the weight (weighted queues) and rate per minute (burst and spaced queues) of one
     * fairness key of {@code queue}, on every node from its next claim; a null keeps what the key
     * had, which is the default (weight 1, the queue's {@code rate-per-minute}) when it had nothing.
     * {@link FairnessSetting#KEYLESS} sets the group of jobs without a key. Settings of a queue that
     * is not fair, or of a key with no jobs, are kept and take effect when they apply.
     */
    FairnessSetting setFairness(String queue, String fairnessKey, Double weight, Integer ratePerMinute);

    /** Removes one key's setting, so it takes the defaults again; false when it had none. */
    boolean clearFairness(String queue, String fairnessKey);
}

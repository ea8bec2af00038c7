package io.workrow.queue.store;

import io.workrow.queue.DeadErrorGroup;
import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.JobDetail;
import io.workrow.queue.JobStatus;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueStats;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Workrow's statements on one schema: the producer's
 * enqueue, the runtime's claims ({@link #claims()}), maintenance, the operator's actions and the
 * reads behind the admin API, the endpoint and the gauges.
 *
 * <p>Every method runs on the given {@link DataSource}. The producer's and the operator's
 * statements join the caller's Spring-managed transaction when there is one; the statements the
 * runtime runs from its own threads never run inside an application transaction, and they and the
 * operator's writes are bounded by a statement timeout, so a lock held elsewhere cannot hang them.
 */
public interface JobStore {

    /** The default limit on statements the runtime runs on its own: claims, results, renewals, maintenance. */
    Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(10);

    /** The store on {@code schema}, with the default statement timeout. */
    static JobStore of(DataSource dataSource, SqlIdentifier schema) {
        return of(dataSource, schema, DEFAULT_STATEMENT_TIMEOUT);
    }

    /**
     * The store on {@code schema}, which Workrow's migrations have brought to the write-once layout.
     *
     * @param statementTimeout the longest any statement may run, waits for locks included
     */
    static JobStore of(DataSource dataSource, SqlIdentifier schema, Duration statementTimeout) {
        return new WriteOnceStore(dataSource, schema, statementTimeout);
    }

    /** The schema this store's statements address. */
    SqlIdentifier schema();

    /** The connections this store's statements run on: a transaction meant to span them is opened on it. */
    DataSource dataSource();

    /** The longest any statement of Workrow's own threads may run through this store. */
    Duration statementTimeout();

    /**
     * This store's statements, schema and statement timeout on other connections: the runtime's
     * lease keeper and result writer each run theirs on a connection reserved for them.
     */
    JobStore on(DataSource dataSource);

    /** The statements of a claim's life (claim, renew, end), as the runtime runs them. */
    ClaimStore claims();

    /** The circuit breaker statements, on this store's connections. */
    BreakerStore breakers();

    /** The holds on queues and partition keys, on this store's connections. */
    HoldStore holds();

    /** The queues' cluster-wide concurrency caps, on this store's connections. */
    CapStore caps();

    /** The fair queues' per-key settings and state. */
    FairnessStore fairness();

    /** The worker registry statements, on this store's connections. */
    WorkerStore workers();

    /** The recurring job statements, on this store's connections. */
    RecurringStore recurring();

    /** The queue rule statements (what the sweeper applies to each queue), on this store's connections. */
    QueueRuleStore queueRules();

    /** The LISTEN/NOTIFY channel of this schema: insert wake-ups and cancellations. */
    String notifyChannel();

    /**
     * Inserts jobs in one round trip and returns their ids in input order. A job whose
     * (queue, idempotency key) already exists is not inserted; the existing job's id is returned
     * in its place.
     */
    List<Long> insertMany(List<NewJob> jobs);

    /** Inserts one job and returns its id, or the id of the job that already holds its idempotency key. */
    long insertOne(NewJob job);

    /**
     * Recovers up to {@code limit} jobs whose lease expired, each by its queue's rule ({@code rules},
     * else {@code fallback}): it waits the rule's backoff before it is due again, or is dead.
     */
    List<MovedJob> sweepExpiredLeases(int limit, List<RecoveryRule> rules, RecoveryRule fallback);

    /** Moves up to {@code limit} waiting jobs with no attempts left to dead. */
    List<MovedJob> retireExhausted(int limit);

    /**
     * Takes up to {@code limit} deadlines that have passed and cancels those of their jobs that
     * nobody started and that still wait (ready, scheduled, or waiting for others), settling their
     * dependents; the deadline of a job that may come back to wait (held by a worker, or locked for
     * now) is looked at again {@code lookAgain} later.
     */
    PastDeadlines cancelPastDeadline(int limit, java.time.Duration lookAgain);

    /**
     * One batch of retention: deletes or drops finished jobs older than their status's retention
     * (statuses not named are kept), at most {@code limit} rows of any one kind; returns how much
     * went, zero when nothing is left to do.
     */
    int pruneFinished(Map<JobStatus, Duration> retention, int limit);

    /**
     * Creates the partitions the next days' history and jobs will land in, ahead of need (the
     * write-once layout's outcome days and job-data id ranges; nothing on a layout without them);
     * returns the partitions created.
     */
    List<String> keepPartitionsAhead();

    /** Makes up to {@code limit} due scheduled jobs claimable; returns how many per queue. */
    Map<String, Integer> promoteScheduled(int limit);

    /** Cancels a waiting or running job of {@code queue}; false when it is finished or unknown. */
    boolean cancel(String queue, long id);

    /**
     * Retries dead jobs matching every given filter ({@code null}: any), dead by the time of the
     * call, in batches; returns how many.
     */
    int retryDead(Collection<Long> ids, String queue, String errorText, String errorKind);

    /** Cancels dead jobs matching every given filter ({@code null}: any), in batches; returns how many. */
    int cancelDead(Collection<Long> ids, String queue, String errorKind);

    /** Open work per queue as {@code QueueAdmin.stats} shows it, idle paused or declared queues included. */
    List<QueueStats> queueStats();

    /** Open work per queue (pending, due, scheduled, running, dead, lag). */
    List<QueueDepth> queueDepth();

    /** Pauses {@code queue} on every node sharing the database. */
    void pauseQueue(String queue, String reason);

    /** Resumes {@code queue}; false when it was not paused. */
    boolean resumeQueue(String queue);

    /** The paused queues, by name. */
    List<String> pausedQueues();

    /** Running jobs, oldest claim first; {@code queue} narrows the list when not null. */
    List<JobSummary> listRunning(String queue, int limit);

    /** Dead jobs, latest first, narrowed by {@code queue} and {@code errorText} when not null. */
    List<JobSummary> listDead(String queue, String errorText, int limit);

    /** Dead jobs grouped by their error's kind, largest group first. */
    List<DeadErrorGroup> deadErrorGroups(String queue, int limit);

    /** One job in full, whatever its status. */
    Optional<JobDetail> find(long id);

    /**
     * Enqueues a batch in one transaction (the caller's when there is one): its callbacks
     * ({@code null} for none), held until the batch is done, then its members, then the seal. A
     * member whose idempotency key is taken is not inserted and is not a member.
     */
    io.workrow.queue.BatchReceipt insertBatch(List<NewJob> members, NewJob onSuccess, NewJob onFinish);

    /** Jobs waiting for other jobs, lowest id first; {@code queue} narrows the list when not null. */
    List<io.workrow.queue.JobSummary> listWaiting(String queue, int limit);

    /** What job {@code id} waits for and what waits for it; empty when no job has this id. */
    Optional<io.workrow.queue.JobDependencies> dependencies(long id);

    /** A batch's counters and its open members by status; empty when there is no such batch. */
    Optional<io.workrow.queue.BatchStatus> findBatch(long id);

    /**
     * The stored result of job {@code id} as JSON text: empty when the job has not completed, its
     * handler returned nothing, or its history is past retention.
     */
    Optional<String> resultJson(long id);

    /** Jobs finished per minute since {@code since}, by outcome. */
    List<FinishedPerMinute> finishedPerMinute(Instant since);

    /** Runs the table check; throws when the database or Workrow's tables cannot be reached. */
    void tableCheck();
}

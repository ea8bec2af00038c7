package io.workrow.queue.store;

import static io.workrow.queue.store.ArrayParameters.arrays;
import static io.workrow.queue.store.ArrayParameters.column;
import static io.workrow.queue.store.JobReads.instant;

import io.workrow.queue.DeadErrorGroup;
import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.JobDetail;
import io.workrow.queue.JobStatus;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueStats;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCreator;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;

/**
 * Runs Workrow's statements ({@link JobSql}), one method per statement with the same name.
 *
 * <p>Every method runs on the given {@link DataSource} through {@link JdbcTemplate}. The producer's
 * and the operator's statements, and a transactional handler's completion, join the caller's
 * Spring-managed transaction when there is one. The statements the runtime runs from its own
 * threads (claims, results, renewals, steps, maintenance) never run inside an application
 * transaction; they and the operator's writes are bounded by a statement timeout, so a lock held
 * elsewhere cannot hang them.
 * Methods that update a held job are fenced by its token and say whether they matched.
 */
public final class RowPerJobStore implements JobStore {

    private static final RowMapper<ClaimedJob> CLAIMED_JOB = (rs, row) -> new ClaimedJob(
            rs.getLong("id"),
            rs.getString("queue"),
            rs.getString("partition_key"),
            rs.getString("idempotency_key"),
            rs.getString("payload"),
            rs.getString("headers"),
            rs.getInt("attempts"),
            rs.getInt("max_attempts"),
            rs.getString("step"),
            rs.getLong("lease_token"),
            instant(rs, "run_at"));


    /** Dead jobs one retry or cancel statement moves at most: about a tenth of a second's work. */
    static final int DEAD_JOBS_BATCH = 5_000;



    /** A run a statement matched, from its {@code id} and {@code token} columns. */
    private static final RowMapper<HeldJob> HELD_JOB = (rs, row) -> new HeldJob(rs.getLong("id"), rs.getLong("token"));

    /** Joins the caller's transaction: enqueue, admin, a transactional handler's completion. */

    private final JdbcTemplate jdbc;
    /** For Workrow's own threads, which never run inside an application transaction; timed out. */
    private final JdbcTemplate timed;
    private final SqlIdentifier schema;
    private final Duration statementTimeout;
    private final String insertMany;
    private final String insertManyWithoutIdempotencyKeys;
    private final String insertOne;
    private final String findByIdempotencyKeys;
    private final String claim;
    private final NamedStatement claimOrdered;
    private final NamedStatement claimWeighted;
    private final NamedStatement claimBurst;
    private final NamedStatement claimSpaced;
    private final String completeMany;
    private final String complete;
    private final String failMany;
    private final String holders;
    private final String renewLeases;
    private final String leaseHolderForget;
    private final String extendLease;
    private final String saveStep;
    private final String releaseMany;
    private final String sweepExpiredLeases;
    private final String retireExhausted;
    private final String pruneFinished;
    private final String tableCheck;
    private final String promoteScheduled;
    private final String retryDead;
    private final String cancel;
    private final String cancelDead;
    private final String databaseNow;
    private final JobReads reads;
    private final QueueControls controls;

    public RowPerJobStore(DataSource dataSource, SqlIdentifier schema) {
        this(dataSource, schema, DEFAULT_STATEMENT_TIMEOUT);
    }

    /**
     * @param statementTimeout the longest any statement of Workrow's own threads may run, waits for
     *     locks included (a JDBC query timeout; whole seconds, at least one)
     */
    public RowPerJobStore(DataSource dataSource, SqlIdentifier schema, Duration statementTimeout) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.timed = new JdbcTemplate(dataSource);
        this.timed.setQueryTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, statementTimeout.toSeconds())));
        this.schema = schema;
        this.statementTimeout = statementTimeout;
        this.insertMany = JobSql.render(JobSql.JOB_INSERT_MANY, schema);
        this.insertManyWithoutIdempotencyKeys = JobSql.render(JobSql.JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS, schema);
        this.insertOne = JobSql.render(JobSql.JOB_INSERT_ONE, schema);
        this.findByIdempotencyKeys = JobSql.render(JobSql.JOB_FIND_BY_IDEMPOTENCY_KEYS, schema);
        this.claim = JobSql.render(JobSql.JOB_CLAIM, schema);
        this.claimOrdered = NamedStatement.parse(JobSql.render(JobSql.JOB_CLAIM_ORDERED, schema));
        this.claimWeighted = NamedStatement.parse(JobSql.render(JobSql.JOB_CLAIM_WEIGHTED, schema));
        this.claimBurst = NamedStatement.parse(JobSql.render(JobSql.JOB_CLAIM_BURST, schema));
        this.claimSpaced = NamedStatement.parse(JobSql.render(JobSql.JOB_CLAIM_SPACED, schema));
        this.completeMany = JobSql.render(JobSql.JOB_COMPLETE_MANY, schema);
        this.complete = JobSql.render(JobSql.JOB_COMPLETE, schema);
        this.failMany = JobSql.render(JobSql.JOB_FAIL_MANY, schema);
        this.holders = JobSql.render(JobSql.JOB_HOLDERS, schema);
        this.renewLeases = JobSql.render(JobSql.JOB_RENEW_LEASES, schema);
        this.leaseHolderForget = JobSql.render(JobSql.LEASE_HOLDER_FORGET, schema);
        this.extendLease = JobSql.render(JobSql.JOB_EXTEND_LEASE, schema);
        this.saveStep = JobSql.render(JobSql.JOB_SAVE_STEP, schema);
        this.releaseMany = JobSql.render(JobSql.JOB_RELEASE_MANY, schema);
        this.sweepExpiredLeases = JobSql.render(JobSql.JOB_SWEEP_EXPIRED_LEASES, schema);
        this.retireExhausted = JobSql.render(JobSql.JOB_RETIRE_EXHAUSTED, schema);
        this.pruneFinished = JobSql.render(JobSql.JOB_PRUNE_FINISHED, schema);
        this.tableCheck = JobSql.render(JobSql.JOB_TABLE_CHECK, schema);
        this.promoteScheduled = JobSql.render(JobSql.JOB_PROMOTE_SCHEDULED, schema);
        this.retryDead = JobSql.render(JobSql.JOB_RETRY_DEAD, schema);
        this.cancel = JobSql.render(JobSql.JOB_CANCEL, schema);
        this.cancelDead = JobSql.render(JobSql.JOB_CANCEL_DEAD, schema);
        this.databaseNow = JobSql.render(JobSql.DATABASE_NOW, schema);
        this.reads = new JobReads(timed, JobSql.render(JobSql.QUEUE_DEPTH, schema),
                JobSql.render(JobSql.JOB_LIST_RUNNING, schema), JobSql.render(JobSql.JOB_LIST_DEAD, schema),
                JobSql.render(JobSql.JOB_DEAD_ERROR_GROUPS, schema),
                JobSql.render(JobSql.JOB_DEAD_ERROR_GROUPS_OF_QUEUE, schema), JobSql.render(JobSql.JOB_FIND, schema),
                JobSql.render(JobSql.JOB_FINISHED_PER_MINUTE, schema));
        this.controls = new QueueControls(timed, schema);
    }

    @Override
    public SqlIdentifier schema() {
        return schema;
    }

    @Override
    public DataSource dataSource() {
        return jdbc.getDataSource();
    }

    @Override
    public Duration statementTimeout() {
        return statementTimeout;
    }

    /**
     * This store's statements, schema and statement timeout on other connections: the runtime's
     * lease keeper and result writer each run theirs on a connection reserved for them.
     */
    public RowPerJobStore on(DataSource dataSource) {
        return new RowPerJobStore(dataSource, schema, statementTimeout);
    }

    /** One table, no partitions. */
    @Override
    public List<String> keepPartitionsAhead() {
        return List.of();
    }

    /** Every job is a claim of its own, at position 1. */
    @Override
    public ClaimStore claims() {
        return new RowPerJobClaims(this);
    }

    @Override
    public BreakerStore breakers() {
        return controls.breakers;
    }

    @Override
    public FairnessStore fairness() {
        return controls.fairness;
    }

    @Override
    public WorkerStore workers() {
        return controls.workers;
    }

    @Override
    public RecurringStore recurring() {
        return controls.recurring;
    }

    @Override
    public QueueRuleStore queueRules() {
        return controls.queueRules;
    }

    @Override
    public String notifyChannel() {
        return controls.notifyChannel();
    }

    /**
     * Inserts jobs in one round trip and returns their ids in input order. A job whose
     * (queue, idempotency key) already exists is not inserted; the existing job's id is returned
     * in its place (one more statement, only when that happens).
     */
    public List<Long> insertMany(List<NewJob> jobs) {
        if (jobs.isEmpty()) {
            return List.of();
        }
        boolean anyIdempotencyKey = jobs.stream().anyMatch(job -> job.idempotencyKey() != null);
        List<IdRow> inserted = jdbc.query(arrays(anyIdempotencyKey ? insertMany : insertManyWithoutIdempotencyKeys,
                ArrayParameters.newJobs(jobs)), IdRow.MAPPER);

        Map<QueueKey, Long> keyed = new HashMap<>();
        List<Long> unkeyed = new ArrayList<>();
        for (IdRow row : inserted) {
            if (row.idempotencyKey() == null) {
                unkeyed.add(row.id());
            } else {
                keyed.put(new QueueKey(row.queue(), row.idempotencyKey()), row.id());
            }
        }
        unkeyed.sort(null);
        findExisting(jobs, keyed);

        List<Long> ids = new ArrayList<>(jobs.size());
        int nextUnkeyed = 0;
        for (NewJob job : jobs) {
            if (job.idempotencyKey() == null) {
                ids.add(unkeyed.get(nextUnkeyed++));
            } else {
                Long id = keyed.get(new QueueKey(job.queue(), job.idempotencyKey()));
                if (id == null) {
                    throw new IllegalStateException("Job with idempotency key '" + job.idempotencyKey()
                            + "' in queue '" + job.queue() + "' was neither inserted nor found; it was"
                            + " deleted while this enqueue ran. Enqueue it again.");
                }
                ids.add(id);
            }
        }
        return ids;
    }

    /**
     * Inserts one job and returns its id; for a (queue, idempotency key) that already exists, the
     * existing job's id (one more statement, only then).
     */
    public long insertOne(NewJob job) {
        List<Long> inserted = jdbc.queryForList(insertOne, Long.class, job.queue(), job.partitionKey(),
                job.partitionBucket(), job.priority(), job.idempotencyKey(), job.payloadJson(), job.headersJson(),
                job.runAt() == null ? null : job.runAt().toString(), job.delayMillis(),
                job.maxAttempts(), job.fairnessKey());
        if (!inserted.isEmpty()) {
            return inserted.get(0);
        }
        Map<QueueKey, Long> keyed = new HashMap<>();
        findExisting(List.of(job), keyed);
        Long id = keyed.get(new QueueKey(job.queue(), job.idempotencyKey()));
        if (id == null) {
            throw new IllegalStateException("Job with idempotency key '" + job.idempotencyKey() + "' in queue '"
                    + job.queue() + "' was neither inserted nor found; it was deleted while this enqueue ran."
                    + " Enqueue it again.");
        }
        return id;
    }

    private void findExisting(List<NewJob> jobs, Map<QueueKey, Long> keyed) {
        List<QueueKey> missing = jobs.stream()
                .filter(job -> job.idempotencyKey() != null)
                .map(job -> new QueueKey(job.queue(), job.idempotencyKey()))
                .filter(key -> !keyed.containsKey(key))
                .distinct()
                .toList();
        if (missing.isEmpty()) {
            return;
        }
        for (IdRow row : jdbc.query(arrays(findByIdempotencyKeys,
                column(missing, "text", QueueKey::queue),
                column(missing, "text", QueueKey::idempotencyKey)), IdRow.MAPPER)) {
            keyed.put(new QueueKey(row.queue(), row.idempotencyKey()), row.id());
        }
    }

    /**
     * Claims up to {@code limit} due jobs of {@code queue} for {@code workerId}; nothing while the
     * queue is paused or its circuit breaker is not closed.
     */
    public List<ClaimedJob> claim(String queue, String workerId, int limit, Duration lease) {
        return claim(queue, workerId, limit, lease, false);
    }

    /**
     * Claims up to {@code limit} due jobs of {@code queue}; {@code probes} when they are the probes
     * a half-open circuit breaker granted ({@link BreakerStore#acquireProbes}), which the breaker
     * check lets through. Nothing while the queue is paused.
     */
    public List<ClaimedJob> claim(String queue, String workerId, int limit, Duration lease, boolean probes) {
        return timed.query(claim, CLAIMED_JOB, queue, probes, queue, queue, limit, queue, limit, limit, workerId,
                lease.toMillis());
    }

    /**
     * Claims up to {@code limit} jobs of an ordered queue: per partition key in {@code buckets},
     * the oldest pending job while no job of the key runs ({@code skipFailed}: scheduled retries do
     * not hold the key). Jobs without a key are claimed regardless of buckets. When a claim that
     * overlapped with another is refused by the one-running-job-per-key index, it is tried once
     * more, then left to the next poll.
     */
    public List<ClaimedJob> claimOrdered(String queue, String workerId, int limit, Duration lease, boolean probes,
            int[] buckets, boolean skipFailed) {
        Map<String, Object> values = ClaimParameters.orderedClaim(queue, workerId, limit, lease, probes, buckets, skipFailed);
        for (int attempt = 1; ; attempt++) {
            try {
                return timed.query(claimOrdered.bind(values), CLAIMED_JOB);
            } catch (DuplicateKeyException e) {
                if (attempt == 2) {
                    return List.of();
                }
            }
        }
    }

    /**
     * Claims up to {@code limit} jobs of a weighted fair queue: its fairness keys share the starts
     * by weight ({@link JobSql#JOB_CLAIM_WEIGHTED}).
     */
    public List<ClaimedJob> claimWeighted(String queue, String workerId, int limit, Duration lease, boolean probes) {
        return timed.query(claimWeighted.bind(ClaimParameters.fairClaim(queue, workerId, limit, lease, probes)), CLAIMED_JOB);
    }

    /**
     * Claims up to {@code limit} jobs of a burst fair queue: each fairness key starts at most its
     * rate per minute, {@code ratePerMinute} unless set for the key ({@link JobSql#JOB_CLAIM_BURST}).
     */
    public List<ClaimedJob> claimBurst(String queue, String workerId, int limit, Duration lease, boolean probes,
            int ratePerMinute) {
        Map<String, Object> values = ClaimParameters.fairClaim(queue, workerId, limit, lease, probes);
        values.put("rate_per_minute", ratePerMinute);
        return timed.query(claimBurst.bind(values), CLAIMED_JOB);
    }

    /**
     * Claims up to {@code limit} jobs of a spaced fair queue: one job per fairness key per
     * {@code 1 / rate}, {@code ratePerMinute} unless set for the key ({@link JobSql#JOB_CLAIM_SPACED}).
     */
    public List<ClaimedJob> claimSpaced(String queue, String workerId, int limit, Duration lease, boolean probes,
            int ratePerMinute) {
        Map<String, Object> values = ClaimParameters.fairClaim(queue, workerId, limit, lease, probes);
        values.put("rate_per_minute", ratePerMinute);
        return timed.query(claimSpaced.bind(values), CLAIMED_JOB);
    }

    /**
     * Completes jobs in one statement; returns the runs (id and token) completed. One not returned
     * lost its lease or was locked by another session: {@link #holders} tells which.
     */
    public Set<HeldJob> completeMany(Collection<HeldJob> jobs) {
        if (jobs.isEmpty()) {
            return Set.of();
        }
        List<HeldJob> list = List.copyOf(jobs);
        return new HashSet<>(timed.query(arrays(completeMany,
                column(list, "int8", HeldJob::id),
                column(list, "int8", HeldJob::leaseToken)), HELD_JOB));
    }

    /**
     * Completes one job in the caller's transaction (a transactional handler's), waiting for a row
     * lock rather than skipping; false when the lease was lost.
     */
    public boolean complete(HeldJob job) {
        return jdbc.update(complete, job.id(), job.leaseToken()) == 1;
    }

    /**
     * Records failed attempts in one statement; returns each recorded run (id and token) with its
     * new status ({@code SCHEDULED} or {@code PENDING} to retry, or {@code DEAD}). One not returned
     * lost its lease or was locked.
     */
    public Map<HeldJob, JobStatus> failMany(Collection<JobFailure> failures) {
        if (failures.isEmpty()) {
            return Map.of();
        }
        List<JobFailure> list = List.copyOf(failures);
        return statuses(timed.query(arrays(failMany,
                column(list, "int8", JobFailure::id),
                column(list, "int8", JobFailure::leaseToken),
                column(list, "text", JobFailure::error),
                column(list, "int8", failure -> failure.retryDelay().toMillis()),
                column(list, "bool", JobFailure::discard)), IdStatus.MAPPER));
    }

    /** The status and token of each job that exists, read without waiting on locks. */
    public Map<Long, JobHolder> holders(Collection<Long> ids) {
        if (ids.isEmpty()) {
            return Map.of();
        }
        List<Long> list = List.copyOf(ids);
        Map<Long, JobHolder> found = new HashMap<>();
        timed.query(arrays(holders, column(list, "int8", id -> id)), (RowCallbackHandler) rs -> {
            long token = rs.getLong("lease_token");
            found.put(rs.getLong("id"), new JobHolder(rs.getLong("id"), JobStatus.fromColumn(rs.getString("status")),
                    rs.wasNull() ? null : token));
        });
        return found;
    }

    /**
     * Renews the leases of held jobs in one statement, and records {@code worker} as the holder of
     * all their tokens until the shortest of their leases from now; returns the ids renewed.
     */
    public Set<HeldJob> renewLeases(String worker, Collection<LeaseRenewal> renewals) {
        if (renewals.isEmpty()) {
            return Set.of();
        }
        List<LeaseRenewal> list = List.copyOf(renewals);
        long vouchMillis = list.stream().mapToLong(renewal -> renewal.lease().toMillis()).min().orElseThrow();
        Long[] tokens = list.stream().map(LeaseRenewal::leaseToken).toArray(Long[]::new);
        return new HashSet<>(timed.query(connection -> {
            PreparedStatement statement = connection.prepareStatement(renewLeases);
            statement.setString(1, worker);
            statement.setLong(2, vouchMillis);
            statement.setArray(3, connection.createArrayOf("int8", tokens));
            statement.setString(4, worker);
            statement.setArray(5, connection.createArrayOf("int8", list.stream().map(LeaseRenewal::id).toArray()));
            statement.setArray(6, connection.createArrayOf("int8", tokens));
            statement.setArray(7, connection.createArrayOf("int8",
                    list.stream().map(renewal -> renewal.lease().toMillis()).toArray()));
            return statement;
        }, HELD_JOB));
    }

    /** {@code worker} vouches for no lease any more (it is stopping). */
    public void forgetLeaseHolder(String worker) {
        timed.update(leaseHolderForget, worker);
    }

    /** Sets the lease to expire {@code lease} from now; false when the lease was lost. */
    public boolean extendLease(HeldJob job, Duration lease) {
        return timed.update(extendLease, lease.toMillis(), job.id(), job.leaseToken()) == 1;
    }

    /** Records the step a held job reached, in a statement of its own; false when the lease was lost. */
    public boolean saveStep(HeldJob job, String step) {
        return timed.update(saveStep, step, job.id(), job.leaseToken()) == 1;
    }

    /** Returns held jobs to pending (or dead) with no owner; returns each released id with its new status. */
    public Map<HeldJob, JobStatus> releaseMany(Collection<JobRelease> releases) {
        if (releases.isEmpty()) {
            return Map.of();
        }
        List<JobRelease> list = List.copyOf(releases);
        return statuses(timed.query(arrays(releaseMany,
                column(list, "int8", JobRelease::id),
                column(list, "int8", JobRelease::leaseToken),
                column(list, "bool", JobRelease::giveBack)), IdStatus.MAPPER));
    }

    /**
     * Recovers up to {@code limit} jobs whose lease expired, each by its queue's rule ({@code rules},
     * else {@code fallback}): it waits the rule's backoff before it is due again, or is dead.
     */
    public List<MovedJob> sweepExpiredLeases(int limit, List<RecoveryRule> rules, RecoveryRule fallback) {
        return sweep(timed, sweepExpiredLeases, limit, rules, fallback);
    }

    /** Runs a sweep statement of either layout: its limit, the configured rules and the fallback rule. */
    static List<MovedJob> sweep(JdbcTemplate timed, String sql, int limit, List<RecoveryRule> rules,
            RecoveryRule fallback) {
        return timed.query(connection -> {
            PreparedStatement statement = connection.prepareStatement(sql);
            statement.setInt(1, limit);
            RecoveryRule.bindArrays(statement, 2, rules);
            statement.setInt(8, fallback.maxLeaseExpiries());
            statement.setLong(9, fallback.maxMillis());
            statement.setLong(10, fallback.initialMillis());
            statement.setDouble(11, fallback.multiplier());
            statement.setDouble(12, fallback.jitter());
            return statement;
        }, (rs, row) -> new MovedJob(
                rs.getLong("id"), rs.getString("queue"), JobStatus.fromColumn(rs.getString("status")),
                rs.getInt("attempts"), rs.getInt("max_attempts"), rs.getString("previous_owner"),
                rs.getInt("lease_expiries")));
    }

    /** Moves up to {@code limit} pending jobs with no attempts left to dead. */
    public List<MovedJob> retireExhausted(int limit) {
        return timed.query(retireExhausted, (rs, row) -> new MovedJob(
                rs.getLong("id"), rs.getString("queue"), JobStatus.DEAD,
                rs.getInt("attempts"), rs.getInt("max_attempts"), null, 0), limit);
    }

    /** Deletes up to {@code limit} jobs in {@code status} that finished more than {@code olderThan} ago. */
    @Override
    public int pruneFinished(Map<JobStatus, Duration> retention, int limit) {
        int deleted = 0;
        for (Map.Entry<JobStatus, Duration> entry : retention.entrySet()) {
            deleted += pruneFinished(entry.getKey(), entry.getValue(), limit);
        }
        return deleted;
    }

    /** Deletes up to {@code limit} jobs of finished {@code status} that finished more than {@code olderThan} ago. */
    public int pruneFinished(JobStatus status, Duration olderThan, int limit) {
        if (!status.isFinished()) {
            throw new IllegalArgumentException("Only finished jobs are pruned, not " + status);
        }
        return timed.update(pruneFinished, status.columnValue(), olderThan.toMillis(), limit);
    }

    @Override
    public void tableCheck() {
        timed.query(tableCheck, (RowCallbackHandler) rs -> { });
    }

    /**
     * Open work per queue as {@code QueueAdmin.stats} shows it: {@link #queueDepth}, with every
     * paused queue and every queue a runtime has declared rules for, so that an idle queue is
     * listed too (and can be paused from the page).
     */
    public List<QueueStats> queueStats() {
        return controls.queueStats(queueDepth());
    }

    @Override
    public List<QueueDepth> queueDepth() {
        return reads.queueDepth();
    }

    @Override
    public void pauseQueue(String queue, String reason) {
        controls.pauseQueue(queue, reason);
    }

    @Override
    public boolean resumeQueue(String queue) {
        return controls.resumeQueue(queue);
    }

    @Override
    public List<String> pausedQueues() {
        return controls.pausedQueues();
    }

    @Override
    public List<JobSummary> listRunning(String queue, int limit) {
        return reads.listRunning(queue, limit);
    }

    @Override
    public List<JobSummary> listDead(String queue, String errorText, int limit) {
        return reads.listDead(queue, errorText, limit);
    }

    @Override
    public List<DeadErrorGroup> deadErrorGroups(String queue, int limit) {
        return reads.deadErrorGroups(queue, limit);
    }

    @Override
    public Optional<JobDetail> find(long id) {
        return reads.find(id);
    }

    @Override
    public List<FinishedPerMinute> finishedPerMinute(Instant since) {
        return reads.finishedPerMinute(since);
    }

    /**
     * Makes up to {@code limit} scheduled jobs that have fallen due pending; returns how many per
     * queue (their pollers everywhere have been notified).
     */
    public Map<String, Integer> promoteScheduled(int limit) {
        Map<String, Integer> promoted = new java.util.TreeMap<>();
        timed.query(promoteScheduled, (RowCallbackHandler) rs -> promoted.put(rs.getString("queue"), rs.getInt("jobs")),
                limit);
        return promoted;
    }

    /**
     * Retries dead jobs: those in {@code ids} when not null, narrowed by {@code queue},
     * {@code errorText} (a substring of the last error) and {@code errorKind}
     * ({@link DeadErrorGroup#error()}) when not null. Returns how many moved.
     */
    public int retryDead(Collection<Long> ids, String queue, String errorText, String errorKind) {
        Timestamp cutoff = databaseNow();
        return inBatches(limit -> timed.query(deadJobs(retryDead, ids, cutoff, limit, queue, queue, errorText,
                errorText, errorKind, errorKind), (rs, row) -> rs.getInt("retried")).get(0));
    }

    /**
     * Cancels a pending or running job of {@code queue}; false when it was finished, absent or of
     * another queue. A running job's holder is notified so it interrupts the handler.
     */
    public boolean cancel(String queue, long id) {
        return !timed.query(cancel, (rs, row) -> rs.getLong("id"), id, queue).isEmpty();
    }

    /**
     * Cancels dead jobs of {@code queue}: those in {@code ids} when not null, of kind
     * {@code errorKind} when not null. Returns how many.
     */
    public int cancelDead(Collection<Long> ids, String queue, String errorKind) {
        Timestamp cutoff = databaseNow();
        return inBatches(limit -> timed.update(deadJobs(cancelDead, ids, cutoff, limit, queue, errorKind, errorKind)));
    }

    /**
     * Runs a batched statement on dead jobs until a batch comes back short: a group of a million
     * is many statements of {@link #DEAD_JOBS_BATCH}, each well inside the statement timeout and
     * committed on its own (unless the caller's transaction spans them).
     */
    static int inBatches(java.util.function.IntUnaryOperator batch) {
        int total = 0;
        int moved;
        do {
            moved = batch.applyAsInt(DEAD_JOBS_BATCH);
            total += moved;
        } while (moved == DEAD_JOBS_BATCH);
        return total;
    }

    /** The database's time now, for a cutoff that later statements compare with. */
    private Timestamp databaseNow() {
        return timed.queryForObject(databaseNow, Timestamp.class);
    }

    /**
     * A statement on dead jobs whose first two parameters are the id array (null for any id),
     * whose others are text, in order, and whose last two are the cutoff and the batch's limit.
     */
    static PreparedStatementCreator deadJobs(String sql, Collection<Long> ids, Timestamp cutoff, int limit,
            String... texts) {
        Long[] idArray = ids == null ? null : ids.toArray(Long[]::new);
        return connection -> {
            PreparedStatement statement = connection.prepareStatement(sql);
            java.sql.Array array = idArray == null ? null : connection.createArrayOf("int8", idArray);
            statement.setArray(1, array);
            statement.setArray(2, array);
            for (int i = 0; i < texts.length; i++) {
                statement.setString(i + 3, texts[i]);
            }
            statement.setTimestamp(texts.length + 3, cutoff);
            statement.setInt(texts.length + 4, limit);
            return statement;
        };
    }

    private static Map<HeldJob, JobStatus> statuses(List<IdStatus> rows) {
        Map<HeldJob, JobStatus> statuses = new HashMap<>();
        rows.forEach(row -> statuses.put(row.run(), row.status()));
        return statuses;
    }

    /** A timestamptz column as an Instant, or null; the stores of this package read time this way. */
    private record QueueKey(String queue, String idempotencyKey) {
    }

    private record IdStatus(HeldJob run, JobStatus status) {
        static final RowMapper<IdStatus> MAPPER = (rs, row) ->
                new IdStatus(HELD_JOB.mapRow(rs, row), JobStatus.fromColumn(rs.getString("status")));
    }

    private record IdRow(long id, String queue, String idempotencyKey) {
        static final RowMapper<IdRow> MAPPER = (rs, row) ->
                new IdRow(rs.getLong("id"), rs.getString("queue"), rs.getString("idempotency_key"));
    }
}

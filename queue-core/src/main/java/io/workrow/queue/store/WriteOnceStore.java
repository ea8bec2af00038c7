package io.workrow.queue.store;

import static io.workrow.queue.store.ArrayParameters.arrays;
import static io.workrow.queue.store.ArrayParameters.column;

import io.workrow.queue.JobStatus;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCreator;

/**
 * Runs the statements of the write-once layout ({@link JobSql}, one method per statement)
 * against one schema, whose tables Workrow's migration {@code V13} creates: the store of every
 * schema migrated to the latest version.
 */
public final class WriteOnceStore implements JobStore, ClaimStore {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WriteOnceStore.class);

    /** Dead jobs one retry or cancel statement moves at most: about a tenth of a second's work. */
    private static final int DEAD_JOBS_BATCH = 5_000;

    /**
     * Every table a job's rows live in on this layout, unqualified: what a test or a benchmark
     * truncates to start from no jobs (leases, rules and fair queue settings are not jobs).
     */
    public static final List<String> JOB_TABLES = List.of("workrow_job_data", "workrow_ready", "workrow_scheduled",
            "workrow_claim", "workrow_outcome", "workrow_dead", "workrow_job_key", "workrow_key_running",
            "workrow_step", "workrow_waiting", "workrow_dependency", "workrow_batch", "workrow_deadline");

    /**
     * How often a cancel looks again for a job that was between homes when it looked (each look a
     * fresh snapshot; a job is between homes only while a move commits).
     */
    private static final int CANCEL_LOOKS = 50;

    /**
     * How long a partition change waits for the lock on its parent table. A detach or attach
     * queues behind every transaction that has the table open, and every claim, end and enqueue
     * queues behind it meanwhile: it gives up quickly instead, and maintenance tries again later.
     */
    static final Duration PARTITION_LOCK_TIMEOUT = Duration.ofSeconds(1);

    private final DataSource dataSource;
    private final SqlIdentifier schema;
    private final Duration statementTimeout;
    private final boolean claimsPerJob;
    /** For the producer's statements, which run in the caller's transaction and under its limits only. */
    private final JdbcTemplate jdbc;
    private final JdbcTemplate timed;
    /** The claims' plans: generic, not made again at every claim. */
    private final GenericPlans genericPlans;
    private final String insertMany;
    private final String insertManyWithoutIdempotencyKeys;
    private final String insertManyAfter;
    private final String dependenciesCheck;
    private final String dependenciesGone;
    private final String endManySettling;
    private final String completeManySettling;
    private final String settle;
    private final String settleMembers;
    private final String batchOpen;
    private final String batchSeal;
    private final String batchFind;
    private final String batchPrune;
    private final String batchInsertMany;
    private final String batchInsertManyWithoutIdempotencyKeys;
    private final String batchInsertManyAfter;
    /** The moves that make jobs terminal and the settle of their dependents, committed together. */
    private final org.springframework.transaction.support.TransactionTemplate settling;
    private final String keysRelease;
    private final String replaceWaiting;
    private final String keysLock;
    private final CapShares shares;
    private final CappedClaim capped;
    private final String findByIdempotencyKeys;
    private final String claim;
    private final NamedStatement claimOrdered;
    private final NamedStatement claimKeyCapped;
    private final NamedStatement claimWeighted;
    private final NamedStatement claimBurst;
    private final NamedStatement claimSpaced;
    private final String endMany;
    private final String completeMany;
    private final String completeInTransaction;
    private final String renewLeases;
    private final String sweepExpiredLeases;
    private final String cancel;
    private final String liveStatus;
    private final String promoteScheduled;
    private final String outcomeDaysAdd;
    private final String retireExhausted;
    private final String cancelPastDeadline;
    private final String hasReady;
    private final String retryDead;
    private final String cancelDead;
    private final String saveStep;
    private final String extendLease;
    private final String stillHeld;
    private final String leaseHolderForget;
    private final JobReads reads;
    private final String jobDataExtend;
    private final String jobDataRetire;
    private final String pruneDead;
    private final String tableCheck;
    private final QueueControls controls;
    private final String outcomeDaysExpired;
    private final String outcomeDayDetach;
    private final String outcomeDayDrop;
    private final String outcomeDefaultPrune;

    public WriteOnceStore(DataSource dataSource, SqlIdentifier schema) {
        this(dataSource, schema, JobStore.DEFAULT_STATEMENT_TIMEOUT);
    }

    /** @param statementTimeout the longest any statement may run, waits for locks included */
    public WriteOnceStore(DataSource dataSource, SqlIdentifier schema, Duration statementTimeout) {
        this(dataSource, schema, statementTimeout, false);
    }

    private WriteOnceStore(DataSource dataSource, SqlIdentifier schema, Duration statementTimeout,
            boolean claimsPerJob) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.statementTimeout = statementTimeout;
        this.claimsPerJob = claimsPerJob;
        java.util.function.Function<String, String> claimText = claimsPerJob
                ? sql -> JobSql.renderPerJob(sql, schema) : sql -> JobSql.render(sql, schema);
        this.jdbc = new JdbcTemplate(dataSource);
        this.timed = new JdbcTemplate(dataSource);
        this.timed.setQueryTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, statementTimeout.toSeconds())));
        this.genericPlans = new GenericPlans(dataSource, timed);
        this.insertMany = JobSql.render(JobSql.JOB_INSERT_MANY, schema);
        this.insertManyWithoutIdempotencyKeys = JobSql.render(
                JobSql.JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS, schema);
        this.findByIdempotencyKeys = JobSql.render(JobSql.JOB_FIND_BY_IDEMPOTENCY_KEYS, schema);
        this.insertManyAfter = JobSql.render(JobSql.JOB_INSERT_MANY_AFTER, schema);
        this.dependenciesCheck = JobSql.render(JobSql.JOB_DEPENDENCIES_CHECK, schema);
        this.dependenciesGone = JobSql.render(JobSql.JOB_DEPENDENCIES_GONE, schema);
        this.endManySettling = JobSql.render(JobSql.JOB_END_MANY_SETTLING, schema);
        this.completeManySettling = JobSql.render(JobSql.JOB_COMPLETE_MANY_SETTLING, schema);
        this.settle = JobSql.render(JobSql.JOB_SETTLE, schema);
        this.settleMembers = JobSql.render(JobSql.JOB_SETTLE_MEMBERS, schema);
        this.batchOpen = JobSql.render(JobSql.BATCH_OPEN, schema);
        this.batchSeal = JobSql.render(JobSql.BATCH_SEAL, schema);
        this.batchFind = JobSql.render(JobSql.BATCH_FIND, schema);
        this.batchPrune = JobSql.render(JobSql.BATCH_PRUNE, schema);
        this.batchInsertMany = JobSql.renderForBatch(JobSql.JOB_INSERT_MANY, schema);
        this.batchInsertManyWithoutIdempotencyKeys = JobSql.renderForBatch(
                JobSql.JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS, schema);
        this.batchInsertManyAfter = JobSql.renderForBatch(JobSql.JOB_INSERT_MANY_AFTER, schema);
        this.settling = new org.springframework.transaction.support.TransactionTemplate(
                new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource));
        this.keysLock = JobSql.render(JobSql.JOB_KEYS_LOCK, schema);
        this.replaceWaiting = JobSql.render(JobSql.JOB_REPLACE_WAITING, schema);
        this.keysRelease = JobSql.render(JobSql.JOB_KEYS_RELEASE, schema);
        this.claim = claimText.apply(JobSql.JOB_CLAIM);
        CapLock capLock = new CapLock(dataSource, timed, schema);
        this.capped = new CappedClaim(capLock);
        this.shares = new CapShares(capLock, timed, schema);
        this.claimOrdered = NamedStatement.parse(claimText.apply(JobSql.JOB_CLAIM_ORDERED));
        this.claimKeyCapped = NamedStatement.parse(claimText.apply(JobSql.JOB_CLAIM_KEY_CAPPED));
        this.claimWeighted = NamedStatement.parse(claimText.apply(JobSql.JOB_CLAIM_WEIGHTED));
        this.claimBurst = NamedStatement.parse(claimText.apply(JobSql.JOB_CLAIM_BURST));
        this.claimSpaced = NamedStatement.parse(claimText.apply(JobSql.JOB_CLAIM_SPACED));
        this.endMany = JobSql.render(JobSql.JOB_END_MANY, schema);
        this.completeMany = JobSql.render(JobSql.JOB_COMPLETE_MANY, schema);
        this.completeInTransaction = JobSql.render(JobSql.JOB_COMPLETE_IN_TRANSACTION, schema);
        this.renewLeases = JobSql.render(JobSql.JOB_RENEW_LEASES, schema);
        this.sweepExpiredLeases = JobSql.render(JobSql.JOB_SWEEP_EXPIRED_LEASES, schema);
        this.cancel = JobSql.render(JobSql.JOB_CANCEL, schema);
        this.liveStatus = JobSql.render(JobSql.JOB_LIVE_STATUS, schema);
        this.promoteScheduled = JobSql.render(JobSql.JOB_PROMOTE_SCHEDULED, schema);
        this.outcomeDaysAdd = JobSql.render(JobSql.OUTCOME_DAYS_ADD, schema);
        this.retireExhausted = JobSql.render(JobSql.JOB_RETIRE_EXHAUSTED, schema);
        this.cancelPastDeadline = JobSql.render(JobSql.JOB_CANCEL_PAST_DEADLINE, schema);
        this.hasReady = JobSql.render(JobSql.QUEUE_HAS_READY, schema);
        this.retryDead = JobSql.render(JobSql.JOB_RETRY_DEAD, schema);
        this.cancelDead = JobSql.render(JobSql.JOB_CANCEL_DEAD, schema);
        this.saveStep = JobSql.render(JobSql.JOB_SAVE_STEP, schema);
        this.extendLease = JobSql.render(JobSql.JOB_EXTEND_LEASE, schema);
        this.stillHeld = JobSql.render(JobSql.CLAIMS_STILL_HELD, schema);
        this.leaseHolderForget = JobSql.render(JobSql.LEASE_HOLDER_FORGET, schema);
        this.jobDataExtend = JobSql.render(JobSql.JOB_DATA_EXTEND, schema);
        this.jobDataRetire = JobSql.render(JobSql.JOB_DATA_RETIRE, schema);
        this.pruneDead = JobSql.render(JobSql.JOB_PRUNE_DEAD, schema);
        this.tableCheck = JobSql.render(JobSql.JOB_TABLE_CHECK, schema);
        this.controls = new QueueControls(timed, schema);
        this.reads = new JobReads(timed, JobSql.render(JobSql.QUEUE_DEPTH, schema),
                JobSql.render(JobSql.JOB_LIST_RUNNING, schema),
                JobSql.render(JobSql.JOB_LIST_DEAD, schema),
                JobSql.render(JobSql.JOB_DEAD_ERROR_GROUPS, schema),
                JobSql.render(JobSql.JOB_DEAD_ERROR_GROUPS_OF_QUEUE, schema),
                JobSql.render(JobSql.JOB_FIND, schema),
                JobSql.render(JobSql.JOB_FINISHED_PER_MINUTE, schema),
                JobSql.render(JobSql.JOB_CREATED_AT, schema),
                JobSql.render(JobSql.JOB_RESULT, schema),
                JobSql.render(JobSql.JOB_DEPENDENCIES, schema),
                JobSql.render(JobSql.JOB_DEPENDENCY_RESULTS, schema),
                JobSql.render(JobSql.JOB_LIST_WAITING, schema),
                JobSql.render(JobSql.JOB_WAITS_FOR, schema),
                JobSql.render(JobSql.JOB_WAITED_ON_BY, schema));
        this.outcomeDaysExpired = JobSql.render(JobSql.OUTCOME_DAYS_EXPIRED, schema);
        this.outcomeDayDetach = JobSql.render(JobSql.OUTCOME_DAY_DETACH, schema);
        this.outcomeDayDrop = JobSql.render(JobSql.OUTCOME_DAY_DROP, schema);
        this.outcomeDefaultPrune = JobSql.render(JobSql.OUTCOME_DEFAULT_PRUNE, schema);
    }

    /**
     * This store with claims that write one claim row per job (each job at position 1), for a
     * transactional queue: its handler completes inside its own transaction, which holds the claim
     * row locked until it ends, so sharing the row would hold the batch-mates' ends. Everything but
     * the claims is the same.
     */
    @Override
    public WriteOnceStore perJob() {
        return claimsPerJob ? this : new WriteOnceStore(dataSource, schema, statementTimeout, true);
    }

    @Override
    public WriteOnceStore on(DataSource other) {
        return new WriteOnceStore(other, schema, statementTimeout, claimsPerJob);
    }

    @Override
    public SqlIdentifier schema() {
        return schema;
    }

    @Override
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public Duration statementTimeout() {
        return statementTimeout;
    }

    /** Outcome days this far ahead of today exist at all times. */
    static final int OUTCOME_DAYS_AHEAD = 7;

    /** The smallest job-data id range created: V13's first range is this large. */
    static final long JOB_DATA_RANGE_MIN = 1_000_000;

    /**
     * The outcome log's days up to {@link #OUTCOME_DAYS_AHEAD} ahead, and the next job-data id
     * range once half of the newest is used.
     */
    @Override
    public List<String> keepPartitionsAhead() {
        List<String> created = new ArrayList<>();
        for (java.time.LocalDate day : outcomeDaysAdd(OUTCOME_DAYS_AHEAD + 1)) {
            created.add("workrow_outcome_" + day.format(java.time.format.DateTimeFormatter.BASIC_ISO_DATE));
        }
        extendJobData(JOB_DATA_RANGE_MIN).ifPresent(created::add);
        return created;
    }

    /** This store runs the claims itself. */
    @Override
    public WriteOnceStore claims() {
        return this;
    }

    @Override
    public BreakerStore breakers() {
        return controls.breakers;
    }

    @Override
    public HoldStore holds() {
        return controls.holds;
    }

    @Override
    public CapStore caps() {
        return controls.caps;
    }

    @Override
    public List<ClaimedPosition> claimCapped(String queue, int limit, RoomClaim claim) {
        return capped.claim(queue, limit, claim);
    }

    @Override
    public ShareGrant resizeShare(String queue, String worker, Duration lease, Duration wantLife, ShareRule rule) {
        return shares.resize(queue, worker, lease, wantLife, rule);
    }

    @Override
    public boolean hasReady(String queue) {
        return Boolean.TRUE.equals(timed.queryForObject(hasReady, Boolean.class, queue, queue));
    }

    @Override
    public Set<String> renewShares(String worker, Duration lease) {
        return shares.renew(worker, lease);
    }

    @Override
    public void dropShares(String worker, Collection<String> queues) {
        shares.dropAll(worker, queues);
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
    public List<io.workrow.queue.QueueStats> queueStats() {
        return controls.queueStats(queueDepth());
    }

    @Override
    public void tableCheck() {
        timed.query(tableCheck, (org.springframework.jdbc.core.RowCallbackHandler) rs -> { });
    }

    /**
     * Inserts one job and returns its id, or the id of the job that already holds its
     * idempotency key.
     */
    public long insertOne(NewJob job) {
        return insertMany(List.of(job)).get(0);
    }

    /**
     * Whole days of the outcome log and whole id ranges of job data go once they are older than
     * the longer of the completed and cancelled retentions (a day's log holds both); dead jobs
     * past theirs are deleted, {@code limit} at a time. Returns the partitions dropped and the
     * dead jobs deleted.
     */
    @Override
    public int pruneFinished(Map<JobStatus, Duration> retention, int limit) {
        int done = 0;
        // the dead first: a partition lock given up on must not keep them past their retention
        Duration dead = retention.get(JobStatus.DEAD);
        if (dead != null) {
            done += pruneDead(dead, limit);
        }
        Duration history = java.util.stream.Stream.of(JobStatus.COMPLETED, JobStatus.CANCELLED)
                .map(retention::get).filter(java.util.Objects::nonNull).max(Duration::compareTo).orElse(null);
        if (history != null) {
            done += outcomeDaysDrop(history).size();
            done += timed.update(outcomeDefaultPrune, history.toMillis(), limit);
            done += retireJobData(history).size();
            done += timed.update(batchPrune, history.toMillis(), limit);
        }
        return done;
    }

    /** Deletes up to {@code limit} dead jobs that died more than {@code olderThan} ago; returns how many. */
    public int pruneDead(Duration olderThan, int limit) {
        return timed.update(pruneDead, olderThan.toMillis(), limit);
    }

    /**
     * Enqueues jobs in one statement and returns their ids in input order; a job whose
     * (queue, idempotency key) is taken returns the id of the job that holds it.
     */
    public List<Long> insertMany(List<NewJob> jobs) {
        if (jobs.isEmpty()) {
            return List.of();
        }
        if (jobs.stream().anyMatch(NewJob::keyMayMove)) {
            // A key freed and taken again in one transaction: no other enqueue sees it free between.
            return settling.execute(status -> insertManyMovingKeys(jobs));
        }
        return insertManyMovingKeys(jobs);
    }

    private List<Long> insertManyMovingKeys(List<NewJob> jobs) {
        Long[] ids = new Long[jobs.size()];
        insertFresh(jobs, null, ids);
        for (int round = 1; round <= KEY_ROUNDS; round++) {
            replaceWaiting(jobs, ids);
            List<Integer> again = takeOverKeys(jobs, ids);
            if (again.isEmpty() || round == KEY_ROUNDS) {
                break;
            }
            // Their key changed under another enqueue: inserted afresh, each waits for that enqueue's
            // end on the key's row, and the next round looks at the key's job as it then is.
            Long[] againIds = new Long[again.size()];
            insertFresh(again.stream().map(jobs::get).toList(), null, againIds);
            for (int i = 0; i < again.size(); i++) {
                ids[again.get(i)] = againIds[i];
            }
        }
        List<NewJob> taken = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == null) {
                taken.add(jobs.get(i));
            }
        }
        if (!taken.isEmpty()) {
            Map<List<String>, Long> existing = new HashMap<>();
            jdbc.query(arrays(findByIdempotencyKeys,
                    column(taken, "text", NewJob::queue),
                    column(taken, "text", NewJob::idempotencyKey)),
                    rs -> {
                        existing.put(List.of(rs.getString("queue"), rs.getString("idempotency_key")), rs.getLong("id"));
                    });
            for (int i = 0; i < ids.length; i++) {
                if (ids[i] == null) {
                    NewJob job = jobs.get(i);
                    ids[i] = existing.get(List.of(job.queue(), job.idempotencyKey()));
                    if (ids[i] == null) {
                        throw new org.springframework.dao.TransientDataAccessResourceException("The idempotency key of "
                                + job.queue() + " changed hands " + KEY_ROUNDS + " times during this enqueue; enqueue"
                                + " it again");
                    }
                }
            }
        }
        return List.of(ids);
    }

    /**
     * For the replacing jobs whose keys were taken ({@code ids} null): replaces the payload and due
     * time of the key's job while it waits ({@link JobSql#JOB_REPLACE_WAITING}); the last request of
     * a key in this call is the one written, and every request of the key gets the job's id. A key
     * whose job has started is left to {@link #takeOverKeys}.
     */
    private void replaceWaiting(List<NewJob> jobs, Long[] ids) {
        Map<List<String>, Integer> lastOfKey = new LinkedHashMap<>();
        for (int i = 0; i < ids.length; i++) {
            NewJob job = jobs.get(i);
            if (ids[i] == null && job.replaceWaiting()) {
                lastOfKey.put(List.of(job.queue(), job.idempotencyKey()), i);
            }
        }
        if (lastOfKey.isEmpty()) {
            return;
        }
        List<Integer> positions = List.copyOf(lastOfKey.values());
        List<NewJob> replacing = positions.stream().map(jobs::get).toList();
        Map<Integer, Long> replaced = new HashMap<>();
        // Two statements, in the caller's transaction or one of their own: the keys' locks first,
        // then the replacement in a snapshot that sees what the previous replacement wrote.
        settling.executeWithoutResult(status -> {
            jdbc.query(arrays(keysLock,
                    column(replacing, "text", NewJob::queue),
                    column(replacing, "text", NewJob::idempotencyKey)), rs -> {
                    });
            jdbc.query(arrays(replaceWaiting,
                    column(replacing, "text", NewJob::queue),
                    column(replacing, "text", NewJob::idempotencyKey),
                    column(replacing, "text", NewJob::payloadJson),
                    column(replacing, "text", NewJob::headersJson),
                    column(replacing, "text", job -> job.runAt() == null ? null : job.runAt().toString()),
                    column(replacing, "int8", NewJob::delayMillis),
                    column(replacing, "text", job -> job.expiresAt() == null ? null : job.expiresAt().toString()),
                    column(replacing, "int8", NewJob::timeoutMillis),
                    column(positions, "int4", position -> position)),
                    rs -> {
                        replaced.put(rs.getInt("ord"), rs.getLong("id"));
                    });
        });
        for (int i = 0; i < ids.length; i++) {
            NewJob job = jobs.get(i);
            if (ids[i] == null && job.replaceWaiting()) {
                Long id = replaced.get(lastOfKey.get(List.of(job.queue(), job.idempotencyKey())));
                if (id != null) {
                    ids[i] = id;
                }
            }
        }
    }

    /** How often an enqueue looks again at a key that other enqueues keep changing under it. */
    private static final int KEY_ROUNDS = 10;

    /**
     * For the jobs whose keys were taken ({@code ids} null) and whose scope lets a key move
     * ({@code KeyScope.WHILE_WAITING}, {@code WHILE_ACTIVE}, or a replacing enqueue): frees the keys
     * whose jobs are past that scope ({@link JobSql#JOB_KEYS_RELEASE}) and inserts those jobs again,
     * which now take them. Returns the positions to look at again: keys another enqueue changed
     * first, and replacing enqueues whose key's job was neither replaced nor past its scope (it was
     * replaced or moved by another enqueue meanwhile).
     */
    private List<Integer> takeOverKeys(List<NewJob> jobs, Long[] ids) {
        List<Integer> movable = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == null && jobs.get(i).keyMayMove()) {
                movable.add(i);
            }
        }
        if (movable.isEmpty()) {
            return List.of();
        }
        List<NewJob> wanting = movable.stream().map(jobs::get).toList();
        // The keys' rows in key order first, as the inserts and replacements take them: two enqueues
        // of overlapping keys wait for each other in line, not in a circle.
        jdbc.query(arrays(keysLock,
                column(wanting, "text", NewJob::queue),
                column(wanting, "text", NewJob::idempotencyKey)), rs -> {
                });
        Set<List<String>> freed = new java.util.HashSet<>();
        Set<List<String>> contended = new java.util.HashSet<>();
        Set<List<String>> members = new java.util.HashSet<>();
        jdbc.query(arrays(keysRelease,
                column(wanting, "text", NewJob::queue),
                column(wanting, "text", NewJob::idempotencyKey),
                column(wanting, "text", job -> job.keyScopeForMove() == io.workrow.queue.KeyScope.WHILE_WAITING
                        ? "waiting" : "active")),
                rs -> {
                    List<String> key = List.of(rs.getString("queue"), rs.getString("idempotency_key"));
                    boolean wasFreed = rs.getBoolean("freed");
                    (rs.wasNull() ? members : wasFreed ? freed : contended).add(key);
                });
        List<Integer> insert = new ArrayList<>();
        List<Integer> lookAgain = new ArrayList<>();
        for (int index : movable) {
            NewJob job = jobs.get(index);
            List<String> key = List.of(job.queue(), job.idempotencyKey());
            // One new job per freed key: the first request of the call that wants it.
            if (freed.remove(key)) {
                insert.add(index);
            } else if (contended.contains(key) || (job.replaceWaiting() && !members.contains(key))) {
                lookAgain.add(index);
            }
        }
        if (!insert.isEmpty()) {
            Long[] newIds = new Long[insert.size()];
            insertFresh(insert.stream().map(jobs::get).toList(), null, newIds);
            for (int i = 0; i < insert.size(); i++) {
                ids[insert.get(i)] = newIds[i];
                if (newIds[i] == null) {
                    lookAgain.add(insert.get(i));
                }
            }
        }
        return lookAgain;
    }

    /**
     * Inserts {@code jobs} (members of batch {@code batchId}, or of none when it is null), writing
     * the id of each job inserted into {@code ids} at its index; a job whose idempotency key was
     * taken is left null. Returns how many were born cancelled (after a dead or cancelled job).
     */
    private int insertFresh(List<NewJob> jobs, Long batchId, Long[] ids) {
        int[] bornCancelled = {0};
        boolean anyIdempotencyKey = jobs.stream().anyMatch(job -> job.idempotencyKey() != null);
        // The producer's statements: in the caller's transaction, bounded by nothing of Workrow's.
        if (jobs.stream().anyMatch(NewJob::waits)) {
            jdbc.query(dependentInsert(jobs, batchId), rs -> {
                ids[rs.getInt("ord") - 1] = rs.getLong("id");
                if ("cancelled".equals(rs.getString("home"))) {
                    bornCancelled[0]++;
                }
            });
        } else {
            String sql = batchId == null
                    ? (anyIdempotencyKey ? insertMany : insertManyWithoutIdempotencyKeys)
                    : (anyIdempotencyKey ? batchInsertMany : batchInsertManyWithoutIdempotencyKeys);
            jdbc.query(withBatch(sql, ArrayParameters.newJobs(jobs), batchId, List.of()), rs -> {
                ids[rs.getInt("ord") - 1] = rs.getLong("id");
            });
        }
        return bornCancelled[0];
    }

    /**
     * {@code sql} bound to the eleven job arrays, then the batch's id when there is one, then
     * {@code rest} in order.
     */
    private static org.springframework.jdbc.core.PreparedStatementCreator withBatch(String sql,
            ArrayParameters.Column[] jobColumns, Long batchId, List<Object> rest) {
        return connection -> {
            PreparedStatement statement = connection.prepareStatement(sql);
            int index = 1;
            for (ArrayParameters.Column jobColumn : jobColumns) {
                statement.setArray(index++, jobColumn.create(connection));
            }
            if (batchId != null) {
                statement.setLong(index++, batchId);
            }
            for (Object value : rest) {
                if (value instanceof ArrayParameters.Column column) {
                    statement.setArray(index++, column.create(connection));
                } else {
                    statement.setObject(index++, value);
                }
            }
            return statement;
        };
    }

    @Override
    public io.workrow.queue.BatchReceipt insertBatch(List<NewJob> members, NewJob onSuccess, NewJob onFinish) {
        return settling.execute(status -> {
            List<NewJob> callbacks = new ArrayList<>();
            List<String> kinds = new ArrayList<>();
            if (onSuccess != null) {
                callbacks.add(onSuccess);
                kinds.add("success");
            }
            if (onFinish != null) {
                callbacks.add(onFinish);
                kinds.add("finish");
            }
            long[] batchId = {0};
            jdbc.query(withBatch(batchOpen, ArrayParameters.newJobs(callbacks), null,
                    List.of(column(kinds, "text", kind -> kind))), rs -> {
                batchId[0] = rs.getLong("batch_id");
            });
            Long[] ids = new Long[members.size()];
            int bornCancelled = 0;
            for (int from = 0; from < members.size(); from += BATCH_CHUNK) {
                List<NewJob> chunk = members.subList(from, Math.min(members.size(), from + BATCH_CHUNK));
                Long[] chunkIds = new Long[chunk.size()];
                bornCancelled += insertFresh(chunk, batchId[0], chunkIds);
                System.arraycopy(chunkIds, 0, ids, from, chunkIds.length);
            }
            List<Long> inserted = java.util.Arrays.stream(ids).filter(java.util.Objects::nonNull).toList();
            long first = inserted.stream().mapToLong(Long::longValue).min().orElse(0);
            long last = inserted.stream().mapToLong(Long::longValue).max().orElse(0);
            jdbc.query(batchSeal, rs -> {
                log.debug("job={} queue={} is {}: batch {} was sealed with all its members ended", rs.getLong("id"),
                        rs.getString("queue"), rs.getString("status"), batchId[0]);
            }, inserted.size(), first, last, bornCancelled, batchId[0]);
            return new io.workrow.queue.BatchReceipt(batchId[0], inserted);
        });
    }

    /** How long a settling end waits for a lock before it is rolled back and sent again. */
    static final Duration SETTLING_LOCK_TIMEOUT = Duration.ofSeconds(2);

    /** Members per enqueue statement of a batch: a batch of any size is written in such chunks. */
    static final int BATCH_CHUNK = 5_000;

    @Override
    public List<io.workrow.queue.JobSummary> listWaiting(String queue, int limit) {
        return reads.listWaiting(queue, limit);
    }

    @Override
    public java.util.Optional<io.workrow.queue.JobDependencies> dependencies(long id) {
        return reads.dependencies(id);
    }

    @Override
    public java.util.Optional<io.workrow.queue.BatchStatus> findBatch(long id) {
        return timed.query(batchFind, (rs, row) -> {
            Map<JobStatus, Long> counts = new java.util.EnumMap<>(JobStatus.class);
            putIfAny(counts, JobStatus.COMPLETED, rs.getLong("completed"));
            putIfAny(counts, JobStatus.DEAD, rs.getLong("dead"));
            putIfAny(counts, JobStatus.CANCELLED, rs.getLong("cancelled"));
            putIfAny(counts, JobStatus.PENDING, rs.getLong("pending"));
            putIfAny(counts, JobStatus.SCHEDULED, rs.getLong("scheduled"));
            putIfAny(counts, JobStatus.WAITING, rs.getLong("waiting"));
            putIfAny(counts, JobStatus.RUNNING, rs.getInt("total") - counts.values().stream()
                    .mapToLong(Long::longValue).sum());
            return new io.workrow.queue.BatchStatus(rs.getLong("id"), rs.getInt("total"), counts,
                    (Long) rs.getObject("on_success_id"), (Long) rs.getObject("on_finish_id"),
                    JobReads.instant(rs, "created_at"), JobReads.instant(rs, "finished_at"));
        }, id).stream().findFirst();
    }

    private static void putIfAny(Map<JobStatus, Long> counts, JobStatus status, long jobs) {
        if (jobs > 0) {
            counts.put(status, jobs);
        }
    }

    /**
     * The enqueue of a batch in which jobs wait for others: refused before anything is written
     * when a job named does not exist; else {@link JobSql#JOB_INSERT_MANY_AFTER} with each job's
     * dependencies as parallel arrays.
     */
    private org.springframework.jdbc.core.PreparedStatementCreator dependentInsert(List<NewJob> jobs, Long batchId) {
        List<Long> ords = new ArrayList<>();
        List<Long> deps = new ArrayList<>();
        List<Boolean> settled = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            for (Long dep : jobs.get(i).after()) {
                ords.add(i + 1L);
                deps.add(dep);
                settled.add(false);
            }
            for (Long dep : jobs.get(i).afterSettled()) {
                ords.add(i + 1L);
                deps.add(dep);
                settled.add(true);
            }
        }
        Object[] check = new Object[1];
        jdbc.query(arrays(dependenciesCheck, column(deps, "int8", dep -> dep)), rs -> {
            refuseUnknown(rs.getArray("unknown"));
            check[0] = rs.getTimestamp("since");
        });
        java.sql.Timestamp since = (java.sql.Timestamp) check[0];
        jdbc.query(connection -> {
            PreparedStatement statement = connection.prepareStatement(dependenciesGone);
            statement.setArray(1, connection.createArrayOf("int8", deps.toArray()));
            statement.setTimestamp(2, since);
            return statement;
        }, rs -> {
            refuseUnknown(rs.getArray("gone"));
        });
        return withBatch(batchId == null ? insertManyAfter : batchInsertManyAfter, ArrayParameters.newJobs(jobs),
                batchId, List.of(column(ords, "int8", ord -> ord), column(deps, "int8", dep -> dep),
                        column(settled, "bool", flag -> flag), since));
    }

    /** Refuses a dependent enqueue naming jobs it cannot wait for; nothing of it was written. */
    private void refuseUnknown(java.sql.Array unknown) throws java.sql.SQLException {
        if (unknown != null) {
            throw new IllegalArgumentException("after(): no job " + java.util.Arrays.stream((Long[]) unknown.getArray())
                    .map(String::valueOf).collect(java.util.stream.Collectors.joining(", ")) + " in schema "
                    + schema.name() + " (never enqueued, deleted, or past retention); nothing was enqueued");
        }
    }

    /**
     * Reads claimed jobs. {@code sentNanos} is the {@link System#nanoTime()} taken before the claim
     * was sent: a deadline is counted from it, so it falls no later than the database's.
     */
    private static org.springframework.jdbc.core.RowMapper<ClaimedPosition> claimed(long sentNanos) {
        return (rs, row) -> {
            long timeoutMillis = rs.getLong("timeout_ms");
            Duration timeout = rs.wasNull() ? null : Duration.ofMillis(timeoutMillis);
            long expiresInMillis = rs.getLong("expires_in_ms");
            long deadline = rs.wasNull() ? Long.MAX_VALUE
                    : sentNanos + Math.max(0, Math.min(expiresInMillis, Long.MAX_VALUE / 2_000_000)) * 1_000_000L;
            return new ClaimedPosition(rs.getLong("token"), rs.getInt("position"), rs.getLong("id"),
                    rs.getString("queue"), rs.getString("partition_key"), rs.getString("idempotency_key"),
                    rs.getString("payload"), rs.getString("headers"), rs.getInt("attempt"), rs.getInt("max_attempts"),
                    rs.getInt("expiries"), rs.getString("step"), JobReads.instant(rs, "run_at"),
                    rs.getString("last_error"), JobReads.instant(rs, "last_error_at"), (Long) rs.getObject("batch_id"),
                    rs.getBoolean("waited_on"), timeout, deadline, rs.getInt("snoozes"));
        };
    }

    /** Claims up to {@code limit} due jobs of {@code queue} as one batch under one lease. */
    @Override
    public List<ClaimedPosition> claim(String queue, String worker, int limit, Duration lease, boolean probes) {
        return genericPlans.run(() -> timed.query(claim, claimed(System.nanoTime()), queue, probes, queue, queue,
                queue, queue, limit, queue, limit, limit, worker, lease.toMillis()));
    }

    /**
     * Claims up to {@code limit} jobs of an ordered queue as one batch: per partition key in
     * {@code buckets}, the oldest ready job while no job of the key runs ({@code skipFailed}: a
     * job of the key waiting to retry does not hold it). Jobs without a key are claimed regardless
     * of buckets. A claim that overlapped with another on a key is refused by the running keys'
     * primary key; it is tried once more, then left to the next poll.
     */
    @Override
    public List<ClaimedPosition> claimOrdered(String queue, String worker, int limit, Duration lease, boolean probes,
            int[] buckets, boolean skipFailed) {
        Map<String, Object> values = ClaimParameters.orderedClaim(queue, worker, limit, lease, probes, buckets, skipFailed);
        for (int attempt = 1; ; attempt++) {
            try {
                // Each attempt its own transaction: a refused insert aborts the one it ran in.
                return genericPlans.run(() -> timed.query(claimOrdered.bind(values), claimed(System.nanoTime())));
            } catch (org.springframework.dao.DuplicateKeyException e) {
                if (org.springframework.transaction.support.TransactionSynchronizationManager
                        .isActualTransactionActive()) {
                    throw e; // the caller's transaction is aborted: it gives up this claim
                }
                if (attempt == 2) {
                    return List.of();
                }
            }
        }
    }

    /** Claims under a per-key cap ({@link JobSql#JOB_CLAIM_KEY_CAPPED}), in the capped transaction. */
    @Override
    public List<ClaimedPosition> claimKeyCapped(String queue, String worker, int limit, Duration lease, boolean probes,
            int keyCap) {
        Map<String, Object> values = ClaimParameters.keyCappedClaim(queue, worker, limit, lease, probes, keyCap);
        return genericPlans.run(() -> timed.query(claimKeyCapped.bind(values), claimed(System.nanoTime())));
    }

    /** Claims up to {@code limit} jobs of a weighted fair queue as one batch (its keys share starts by weight). */
    @Override
    public List<ClaimedPosition> claimWeighted(String queue, String worker, int limit, Duration lease,
            boolean probes) {
        Map<String, Object> values = ClaimParameters.fairClaim(queue, worker, limit, lease, probes);
        return genericPlans.run(() -> timed.query(claimWeighted.bind(values), claimed(System.nanoTime())));
    }

    /** Claims up to {@code limit} jobs of a burst fair queue: each key at most its rate per minute. */
    @Override
    public List<ClaimedPosition> claimBurst(String queue, String worker, int limit, Duration lease, boolean probes,
            int ratePerMinute) {
        Map<String, Object> values = ClaimParameters.fairClaim(queue, worker, limit, lease, probes);
        values.put("rate_per_minute", ratePerMinute);
        return genericPlans.run(() -> timed.query(claimBurst.bind(values), claimed(System.nanoTime())));
    }

    /** Claims up to {@code limit} jobs of a spaced fair queue: one job per key per {@code 1 / rate}. */
    @Override
    public List<ClaimedPosition> claimSpaced(String queue, String worker, int limit, Duration lease, boolean probes,
            int ratePerMinute) {
        Map<String, Object> values = ClaimParameters.fairClaim(queue, worker, limit, lease, probes);
        values.put("rate_per_minute", ratePerMinute);
        return genericPlans.run(() -> timed.query(claimSpaced.bind(values), claimed(System.nanoTime())));
    }

    /**
     * Ends positions in one statement and says of each whether it counted ({@link EndResult});
     * a call of completions only runs the lean {@link JobSql#JOB_COMPLETE_MANY}. An end must
     * not be sent twice in one call.
     */
    @Override
    public Map<PositionEnd, EndResult> endMany(Collection<PositionEnd> ends) {
        if (ends.isEmpty()) {
            return Map.of();
        }
        // Ends known to be waited on take the settling path at once; the rest go lean, and the
        // gate sends on any that were waited on only since their claim.
        List<PositionEnd> lean = ends.stream().filter(end -> !end.waitedOn()).toList();
        List<PositionEnd> waitedOn = new ArrayList<>(ends.stream().filter(PositionEnd::waitedOn).toList());
        Map<PositionEnd, EndResult> results = new LinkedHashMap<>();
        if (!lean.isEmpty()) {
            results.putAll(runEnds(lean, completeMany, endMany, waitedOn));
        }
        if (!waitedOn.isEmpty()) {
            try {
                results.putAll(endSettling(waitedOn));
            } catch (org.springframework.dao.DataAccessException e) {
                if (results.isEmpty() && !(e instanceof org.springframework.dao.PessimisticLockingFailureException)) {
                    throw e;
                }
                // The settling ends rolled back (a lock held too long, a deadlock across rounds,
                // or worse): they are sent again, while the lean ends' answers, already
                // committed, stand.
                log.debug("{} ends with dependents were rolled back and are sent again: {}", waitedOn.size(),
                        e.getMessage());
                for (PositionEnd end : waitedOn) {
                    results.put(end, new EndResult(EndResult.Verdict.BUSY, null));
                }
            }
        }
        return results;
    }

    /**
     * Ends positions whose jobs others wait on, or that are batch members: the end statement
     * without the gate and, in the same transaction, the settle of the jobs it made terminal, so a
     * dependent is released exactly when its last dependency's end commits, and never by an end
     * the fence refused.
     */
    private Map<PositionEnd, EndResult> endSettling(List<PositionEnd> ends) {
        return settling.execute(status -> {
            // A waiter or batch row held for long (a producer's commit registering a dependent, a
            // transactional handler's settle) rolls this back and the writer sends it again,
            // rather than holding the claim row that commit may be waiting for.
            timed.execute("SET LOCAL lock_timeout = '" + SETTLING_LOCK_TIMEOUT.toMillis() + "ms'");
            Map<PositionEnd, EndResult> results = runEnds(ends, completeManySettling, endManySettling, null);
            List<Long> terminal = new ArrayList<>();
            List<String> hows = new ArrayList<>();
            List<Long> batches = new ArrayList<>();
            results.forEach((end, result) -> {
                if (result.verdict() == EndResult.Verdict.ACCEPTED
                        && (result.status() == JobStatus.COMPLETED || result.status() == JobStatus.DEAD
                                || result.status() == JobStatus.CANCELLED)) {
                    terminal.add(end.id());
                    hows.add(result.status().columnValue());
                    batches.add(end.batchId());
                }
            });
            settle(terminal, hows, batches);
            return results;
        });
    }

    /**
     * Runs one end statement for {@code ends}: {@code completions} (which returns only what it
     * did not accept) when every end is a completion, else {@code anyEnds}; each end's verdict.
     * Positions the lean statements' gate left open go to {@code gated} (null: the statements have
     * no gate).
     */
    private Map<PositionEnd, EndResult> runEnds(List<PositionEnd> ends, String completions, String anyEnds,
            List<PositionEnd> gated) {
        Map<List<Long>, PositionEnd> byPosition = new HashMap<>();
        Set<Long> tokens = new TreeSet<>();
        for (PositionEnd end : ends) {
            byPosition.put(List.of(end.token(), (long) end.position()), end);
            tokens.add(end.token());
        }
        Map<PositionEnd, EndResult> results = new LinkedHashMap<>();
        Set<PositionEnd> left = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        boolean completionsOnly = ends.stream().allMatch(end -> end.kind() == PositionEnd.Kind.COMPLETED);
        timed.query(completionsOnly
                ? arrays(completions,
                        column(ends, "int8", PositionEnd::token),
                        column(ends, "int4", PositionEnd::position),
                        column(ends, "int8", PositionEnd::id),
                        column(ends, "int4", PositionEnd::attempt),
                        column(ends, "int4", PositionEnd::expiries),
                        column(ends, "text", end -> text(end.runAt())),
                        column(ends, "text", PositionEnd::lastError),
                        column(ends, "text", end -> text(end.lastErrorAt())),
                        column(ends, "text", PositionEnd::resultJson),
                        column(List.copyOf(tokens), "int8", token -> token))
                : arrays(anyEnds,
                        column(ends, "int8", PositionEnd::token),
                        column(ends, "int4", PositionEnd::position),
                        column(ends, "int8", PositionEnd::id),
                        column(ends, "int4", PositionEnd::attempt),
                        column(ends, "int4", PositionEnd::maxAttempts),
                        column(ends, "int4", PositionEnd::expiries),
                        column(ends, "text", end -> end.kind().columnValue()),
                        column(ends, "text", PositionEnd::error),
                        column(ends, "int8", end -> end.retryDelay().toMillis()),
                        column(ends, "int4", PositionEnd::maxLeaseExpiries),
                        column(ends, "text", end -> text(end.runAt())),
                        column(ends, "text", PositionEnd::lastError),
                        column(ends, "text", end -> text(end.lastErrorAt())),
                        column(ends, "text", PositionEnd::resultJson),
                        column(ends, "int4", PositionEnd::snoozes),
                        column(List.copyOf(tokens), "int8", token -> token)),
                rs -> {
                    PositionEnd end = byPosition.get(List.of(rs.getLong("token"), (long) rs.getInt("position")));
                    String status = completionsOnly ? null : rs.getString("status");
                    left.add(end);
                    if (gated != null && rs.getBoolean("workflow")) {
                        gated.add(end);
                    } else if (status != null) {
                        results.put(end, new EndResult(EndResult.Verdict.ACCEPTED, JobStatus.fromColumn(status)));
                    } else if (rs.getBoolean("busy")) {
                        results.put(end, new EndResult(EndResult.Verdict.BUSY, null));
                    } else if (rs.getBoolean("ended")) {
                        results.put(end, new EndResult(EndResult.Verdict.ACCEPTED_BEFORE, null));
                    } else {
                        results.put(end, new EndResult(EndResult.Verdict.REFUSED, null));
                    }
                });
        if (completionsOnly) {
            // the completion statements return only what they did not accept
            for (PositionEnd end : ends) {
                if (!left.contains(end)) {
                    results.put(end, new EndResult(EndResult.Verdict.ACCEPTED, JobStatus.COMPLETED));
                }
            }
        }
        return results;
    }

    /**
     * Settles the dependents of jobs this transaction just made terminal ({@link JobSql#JOB_SETTLE}):
     * must run in the transaction whose statement locked their homes, after it.
     */
    private void settle(List<Long> ids, List<String> hows) {
        settle(ids, hows, null);
    }

    /**
     * {@link #settle(List, List)} with each job's batch as its claim read it ({@code null}
     * elements: none), so that the settle need not look them up; {@code batches} null when unknown.
     */
    private void settle(List<Long> ids, List<String> hows, List<Long> batches) {
        if (ids.isEmpty()) {
            return;
        }
        timed.query(batches == null
                ? arrays(settle, column(ids, "int8", id -> id), column(hows, "text", how -> how))
                : arrays(settleMembers, column(ids, "int8", id -> id), column(hows, "text", how -> how),
                        column(batches, "int8", id -> id)),
                rs -> {
            log.debug("job={} queue={} is {}: its dependencies ended", rs.getLong("id"), rs.getString("queue"),
                    rs.getString("status"));
        });
    }

    /** A time as the text an array parameter carries it in (the statement casts it back). */
    private static String text(java.time.Instant instant) {
        return instant == null ? null : instant.toString();
    }

    @Override
    public Map<Long, Set<Integer>> renewLeases(String worker, Collection<ClaimLease> claims, Duration vouch) {
        if (claims.isEmpty()) {
            return Map.of();
        }
        // in token order, so that two renewals lock shared claims in the same order
        Map<Long, Duration> sorted = new TreeMap<>();
        for (ClaimLease claim : claims) {
            sorted.put(claim.token(), claim.lease());
        }
        Object[] tokens = sorted.keySet().toArray();
        Object[] millis = sorted.values().stream().map(Duration::toMillis).toArray();
        Map<Long, Set<Integer>> renewed = new HashMap<>();
        timed.query(connection -> {
            PreparedStatement statement = connection.prepareStatement(renewLeases);
            statement.setString(1, worker);
            statement.setLong(2, vouch.toMillis());
            statement.setArray(3, connection.createArrayOf("int8", tokens));
            statement.setString(4, worker);
            statement.setArray(5, connection.createArrayOf("int8", tokens));
            statement.setArray(6, connection.createArrayOf("int8", millis));
            statement.setString(7, worker);
            return statement;
        }, rs -> {
            String bits = rs.getString("dropped");
            Set<Integer> dropped = new TreeSet<>();
            for (int i = 0; i < bits.length(); i++) {
                if (bits.charAt(i) == '1') {
                    dropped.add(i + 1);
                }
            }
            renewed.put(rs.getLong("token"), dropped);
        });
        return renewed;
    }

    @Override
    public Set<Long> stillHeld(Collection<ClaimLease> claims) {
        if (claims.isEmpty()) {
            return Set.of();
        }
        return new java.util.HashSet<>(timed.query(arrays(stillHeld,
                column(List.copyOf(claims), "int8", ClaimLease::token)), (rs, row) -> rs.getLong("token")));
    }

    @Override
    public void forgetLeaseHolder(String worker) {
        timed.update(leaseHolderForget, worker);
    }

    /**
     * Recovers the jobs of up to {@code limit} claims whose lease expired unvouched, each by its
     * queue's rule ({@code rules}, else {@code fallback}).
     */
    public List<MovedJob> sweepExpiredLeases(int limit, List<RecoveryRule> rules, RecoveryRule fallback) {
        return settling.execute(status -> settledDeaths(sweep(timed, sweepExpiredLeases, limit, rules, fallback)));
    }

    /** {@code moved}, after the dependents of the jobs it sent to dead are settled. */
    private List<MovedJob> settledDeaths(List<MovedJob> moved) {
        List<Long> dead = moved.stream().filter(job -> job.status() == JobStatus.DEAD).map(MovedJob::id).toList();
        settle(dead, java.util.Collections.nCopies(dead.size(), "dead"));
        return moved;
    }

    /**
     * Cancels a scheduled, pending or running job of {@code queue}; false when it is finished, dead
     * or not there. A job caught between two homes (claimed, swept or promoted while the cancel
     * looked) is looked for again.
     */
    public boolean cancel(String queue, long id) {
        for (int look = 1; look <= CANCEL_LOOKS; look++) {
            boolean cancelled;
            try {
                cancelled = Boolean.TRUE.equals(settling.execute(status -> {
                    if (timed.queryForList(cancel, id, queue, id, queue, id, queue, id, queue, id, id).isEmpty()) {
                        return false;
                    }
                    settle(List.of(id), List.of("cancelled"));
                    return true;
                }));
            } catch (org.springframework.dao.PessimisticLockingFailureException e) {
                // A deadlock with the settle of a dependency's end, which locks in another order
                // across rounds: rolled back whole, looked for again; inside the caller's
                // transaction, which the deadlock aborted, the caller decides.
                if (org.springframework.transaction.support.TransactionSynchronizationManager
                        .isActualTransactionActive()) {
                    throw e;
                }
                log.debug("cancel of job={} queue={} met a deadlock, looking again: {}", id, queue, e.getMessage());
                continue;
            }
            if (cancelled) {
                return true;
            }
            List<String> live = timed.queryForList(liveStatus, String.class, id, id, id, id, id, id, id);
            if (live.isEmpty() || live.contains("dead")) {
                return false;
            }
        }
        return false;
    }

    /** Moves up to {@code limit} due scheduled jobs to ready; returns how many per queue. */
    @Override
    public Map<String, Integer> promoteScheduled(int limit) {
        Map<String, Integer> promoted = new TreeMap<>();
        timed.query(promoteScheduled, rs -> {
            promoted.put(rs.getString("queue"), rs.getInt("jobs"));
        }, limit);
        return promoted;
    }

    /** Creates the outcome log's partitions for today and the {@code days - 1} days after; returns those created. */
    public List<java.time.LocalDate> outcomeDaysAdd(int days) {
        return underPartitionLock(connection -> {
            List<java.time.LocalDate> created = new ArrayList<>();
            try (PreparedStatement statement = connection.prepareStatement(outcomeDaysAdd)) {
                statement.setInt(1, days);
                try (java.sql.ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        created.add(rs.getObject("day", java.time.LocalDate.class));
                    }
                }
            }
            return created;
        });
    }

    /**
     * Runs {@code work} in a transaction of its own whose lock waits give up after
     * {@link #PARTITION_LOCK_TIMEOUT} (the transaction rolls back and the error is thrown).
     */
    private <T> T underPartitionLock(org.springframework.jdbc.core.ConnectionCallback<T> work) {
        return timed.execute((org.springframework.jdbc.core.ConnectionCallback<T>) connection -> {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                try (java.sql.Statement statement = connection.createStatement()) {
                    statement.execute("SET LOCAL lock_timeout = '" + PARTITION_LOCK_TIMEOUT.toMillis() + "ms'");
                }
                T result = work.doInConnection(connection);
                connection.commit();
                return result;
            } catch (java.sql.SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        });
    }

    /**
     * Drops every day of the outcome log that ended longer than {@code retention} ago, whole
     * partitions at a time (no row deleted, no vacuum owed); returns the partitions dropped. Each
     * day is detached in a transaction of its own (the one moment every statement on the log
     * waits for, at most {@link #PARTITION_LOCK_TIMEOUT} behind other transactions: a day not
     * detached now fails this call and is dropped by a later one) and dropped in the next.
     */
    public List<String> outcomeDaysDrop(Duration retention) {
        List<String> days = timed.queryForList(outcomeDaysExpired, String.class, retention.toMillis());
        for (String day : days) {
            underPartitionLock(connection -> {
                try (java.sql.PreparedStatement statement = connection.prepareStatement(outcomeDayDetach)) {
                    statement.setString(1, day);
                    return statement.execute();
                }
            });
            timed.queryForObject(outcomeDayDrop, Object.class, day);
        }
        return days;
    }

    /** Moves up to {@code limit} waiting jobs with no attempts left (from ready, and as many from scheduled) to dead. */
    public List<MovedJob> retireExhausted(int limit) {
        return settling.execute(status -> settledDeaths(timed.query(retireExhausted, (rs, row) -> new MovedJob(
                rs.getLong("id"), rs.getString("queue"), JobStatus.DEAD, rs.getInt("attempts"),
                rs.getInt("max_attempts"), null, 0), limit, limit)));
    }

    @Override
    public PastDeadlines cancelPastDeadline(int limit, Duration lookAgain) {
        for (int attempt = 1; ; attempt++) {
            try {
                return settling.execute(status -> {
                    List<MovedJob> cancelled = new ArrayList<>();
                    int[] taken = {0};
                    timed.query(cancelPastDeadline, rs -> {
                        taken[0] = rs.getInt("deadlines");
                        if (rs.getString("queue") != null) {
                            cancelled.add(new MovedJob(rs.getLong("id"), rs.getString("queue"), JobStatus.CANCELLED,
                                    rs.getInt("attempts"), 0, null, 0));
                        }
                    }, limit, lookAgain.toMillis());
                    settle(cancelled.stream().map(MovedJob::id).toList(),
                            java.util.Collections.nCopies(cancelled.size(), "cancelled"));
                    return new PastDeadlines(taken[0], cancelled);
                });
            } catch (org.springframework.dao.PessimisticLockingFailureException e) {
                // A deadlock with the settle of a dependency's end, which locks in another order:
                // rolled back whole, the deadlines still there; tried once more at once.
                if (attempt == 2) {
                    throw e;
                }
                log.debug("cancelling jobs past their deadline met a deadlock, trying again: {}", e.getMessage());
            }
        }
    }

    /**
     * Retries dead jobs matching every given filter ({@code null}: any), dead by the time of the
     * call, in batches; returns how many.
     */
    public int retryDead(Collection<Long> ids, String queue, String errorText, String errorKind) {
        java.sql.Timestamp cutoff = databaseNow();
        return inBatches(limit -> timed.query(deadJobs(retryDead, ids, cutoff, limit, queue, queue,
                errorText, errorText, errorKind, errorKind), (rs, row) -> rs.getInt("retried")).get(0));
    }

    /** Cancels dead jobs of {@code queue} matching the ids and error kind ({@code null}: any); returns how many. */
    public int cancelDead(Collection<Long> ids, String queue, String errorKind) {
        java.sql.Timestamp cutoff = databaseNow();
        return inBatches(limit -> timed.query(deadJobs(cancelDead, ids, cutoff, limit, queue,
                errorKind, errorKind), (rs, row) -> rs.getInt("cancelled")).get(0));
    }

    /** Saves the step a running job reached; false when its position is no longer open. */
    @Override
    public boolean saveStep(ClaimedPosition job, String step) {
        return !timed.queryForList(saveStep, Long.class, job.token(), job.position(), job.position(), job.id(), step)
                .isEmpty();
    }

    /** Extends the lease of a running job's claim to at least {@code lease} from now; false when the position is closed. */
    @Override
    public boolean extendLease(ClaimedPosition job, Duration lease) {
        return timed.update(extendLease, lease.toMillis(), job.token(), job.position(), job.position()) == 1;
    }

    @Override
    public List<QueueDepth> queueDepth() {
        return reads.queueDepth();
    }

    @Override
    public List<io.workrow.queue.JobSummary> listRunning(String queue, int limit) {
        return reads.listRunning(queue, limit);
    }

    @Override
    public List<io.workrow.queue.JobSummary> listDead(String queue, String errorText, int limit) {
        return reads.listDead(queue, errorText, limit);
    }

    @Override
    public List<io.workrow.queue.DeadErrorGroup> deadErrorGroups(String queue, int limit) {
        return reads.deadErrorGroups(queue, limit);
    }

    @Override
    public java.util.Optional<io.workrow.queue.JobDetail> find(long id) {
        return reads.find(id);
    }

    @Override
    public java.util.Optional<String> resultJson(long id) {
        return reads.resultJson(id);
    }

    @Override
    public Map<Long, String> dependencyResultsJson(long id) {
        return reads.dependencyResultsJson(id);
    }

    @Override
    public List<io.workrow.queue.FinishedPerMinute> finishedPerMinute(java.time.Instant since) {
        return reads.finishedPerMinute(since);
    }

    /**
     * Keeps the job data's id ranges ahead of the ids: creates the next partition (at least
     * {@code minSize} ids) once less than half of the newest is left. Returns its name, or empty.
     */
    public java.util.Optional<String> extendJobData(long minSize) {
        return java.util.Optional.ofNullable(underPartitionLock(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(jobDataExtend)) {
                statement.setLong(1, minSize);
                try (java.sql.ResultSet rs = statement.executeQuery()) {
                    rs.next();
                    return rs.getString(1);
                }
            }
        }));
    }

    /**
     * Drops the job data of jobs finished more than {@code retention} ago, a whole id range at a
     * time, keeping the range's stragglers (jobs still live, dead, or finished since) in the
     * default partition; returns the partitions dropped. One transaction, whose lock on the job
     * data gives up after {@link #PARTITION_LOCK_TIMEOUT} rather than hold up claims and enqueues.
     */
    public List<String> retireJobData(Duration retention) {
        return underPartitionLock(connection -> {
            List<String> dropped = new ArrayList<>();
            try (PreparedStatement statement = connection.prepareStatement(jobDataRetire)) {
                statement.setLong(1, retention.toMillis());
                try (java.sql.ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        dropped.add(rs.getString("name"));
                    }
                }
            }
            return dropped;
        });
    }

    /** The database's time: where a batched operator write takes its cutoff. */
    private java.sql.Timestamp databaseNow() {
        return timed.queryForObject("SELECT statement_timestamp()", java.sql.Timestamp.class);
    }

    /**
     * Completes one job on {@code connection}, inside the caller's transaction (a transactional
     * handler's), waiting for its claim row's lock rather than skipping it; false when the position
     * is no longer open (the lease was lost, or the job cancelled).
     */
    @Override
    public boolean completeInTransaction(ClaimedPosition job, String resultJson) {
        java.sql.Connection connection = org.springframework.jdbc.datasource.DataSourceUtils.getConnection(dataSource);
        try {
            return completeInTransaction(connection, job, resultJson);
        } catch (java.sql.SQLException e) {
            throw new org.springframework.jdbc.UncategorizedSQLException("complete in transaction", completeInTransaction,
                    e);
        } finally {
            org.springframework.jdbc.datasource.DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    /** {@link #completeInTransaction(ClaimedPosition, String)} on the caller's own connection. */
    public boolean completeInTransaction(java.sql.Connection connection, ClaimedPosition job, String resultJson)
            throws java.sql.SQLException {
        try (PreparedStatement statement = connection.prepareStatement(completeInTransaction)) {
            statement.setArray(1, connection.createArrayOf("int8", new Object[] {job.token()}));
            statement.setArray(2, connection.createArrayOf("int4", new Object[] {job.position()}));
            statement.setArray(3, connection.createArrayOf("int8", new Object[] {job.id()}));
            statement.setArray(4, connection.createArrayOf("int4", new Object[] {job.attempt()}));
            statement.setArray(5, connection.createArrayOf("int4", new Object[] {job.expiries()}));
            statement.setArray(6, connection.createArrayOf("text", new Object[] {text(job.runAt())}));
            statement.setArray(7, connection.createArrayOf("text", new Object[] {job.lastError()}));
            statement.setArray(8, connection.createArrayOf("text", new Object[] {text(job.lastErrorAt())}));
            statement.setArray(9, connection.createArrayOf("text", new Object[] {resultJson}));
            statement.setArray(10, connection.createArrayOf("int8", new Object[] {job.token()}));
            try (java.sql.ResultSet refused = statement.executeQuery()) {
                if (refused.next()) {
                    return false;
                }
            }
        }
        // Its dependents, in the handler's transaction: released when that commits, not before.
        try (PreparedStatement statement = connection.prepareStatement(settle)) {
            statement.setArray(1, connection.createArrayOf("int8", new Object[] {job.id()}));
            statement.setArray(2, connection.createArrayOf("text", new Object[] {"completed"}));
            statement.executeQuery().close();
        }
        return true;
    }

    /** Runs the sweep statement: its limit, the configured rules and the fallback rule. */
    private static List<MovedJob> sweep(JdbcTemplate timed, String sql, int limit, List<RecoveryRule> rules,
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

    /**
     * Runs a batched statement on dead jobs until a batch comes back short: a group of a million
     * is many statements of {@link #DEAD_JOBS_BATCH}, each well inside the statement timeout and
     * committed on its own (unless the caller's transaction spans them).
     */
    private static int inBatches(java.util.function.IntUnaryOperator batch) {
        int total = 0;
        int moved;
        do {
            moved = batch.applyAsInt(DEAD_JOBS_BATCH);
            total += moved;
        } while (moved == DEAD_JOBS_BATCH);
        return total;
    }

    /**
     * A statement on dead jobs whose first two parameters are the id array (null for any id),
     * whose others are text, in order, and whose last two are the cutoff and the batch's limit.
     */
    private static PreparedStatementCreator deadJobs(String sql, Collection<Long> ids, Timestamp cutoff, int limit,
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
}

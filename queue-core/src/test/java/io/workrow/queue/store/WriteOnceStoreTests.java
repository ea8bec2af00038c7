package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.workrow.queue.JobStatus;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The statements of the write-once layout on a real PostgreSQL: every move keeps each job in
 * exactly one home, the claim row fences every end, and concurrent claimers, enders, sweepers and
 * cancels never run, end or move a job twice.
 */
class WriteOnceStoreTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final Duration LEASE = Duration.ofMinutes(5);

    private static final RecoveryRule NO_BACKOFF = new RecoveryRule("", 0, 1.0, 0, 0, 0);

    private final WriteOnceStore store = database.writeOnceStore();

    @BeforeEach
    void emptyTables() {
        database.jdbc().execute("TRUNCATE workrow_lease_holder, workrow_queue_rule, "
                + String.join(", ", WriteOnceStore.JOB_TABLES));
    }

    private static NewJob job(String queue) {
        return new NewJob(queue, null, 0, 0, null, "{\"n\":1}", "{}", null, 0, 3);
    }

    private static NewJob keyed(String queue, String key) {
        return new NewJob(queue, null, 0, 0, key, "{\"n\":1}", "{}", null, 0, 3);
    }

    private List<Long> enqueue(String queue, int count) {
        return store.insertMany(IntStream.range(0, count).mapToObj(i -> job(queue)).toList());
    }

    /** Each job's homes: the tables whose live rows hold it. One each, always. */
    private Map<Long, List<String>> homes() {
        Map<Long, List<String>> homes = new java.util.TreeMap<>();
        database.jdbc().query("""
                SELECT id, 'pending' AS home FROM workrow_ready
                UNION ALL SELECT id, 'scheduled' FROM workrow_scheduled
                UNION ALL SELECT id, 'dead' FROM workrow_dead
                UNION ALL SELECT job_id, status FROM workrow_outcome WHERE status IN ('completed', 'cancelled')
                UNION ALL
                SELECT held.id, 'running'
                FROM workrow_claim AS claim,
                     unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                WHERE get_bit(claim.settled, held.position::int - 1) = 0
                  AND get_bit(claim.dropped, held.position::int - 1) = 0
                UNION ALL SELECT id, 'data' FROM workrow_job_data
                """, rs -> {
            homes.computeIfAbsent(rs.getLong("id"), id -> new ArrayList<>()).add(rs.getString("home"));
        });
        homes.values().forEach(list -> list.remove("data"));
        return homes;
    }

    private void assertOneHomeEach() {
        assertThat(homes()).allSatisfy((id, where) -> assertThat(where).as("homes of job %d", id).hasSize(1));
        assertThat(database.jdbc().queryForList("""
                SELECT 'key of ' || key.job_id FROM workrow_key_running AS key
                WHERE NOT EXISTS (SELECT 1 FROM workrow_claim AS claim
                                  WHERE claim.token = key.claim_token AND claim.ids @> ARRAY[key.job_id]
                                    AND get_bit(claim.settled, array_position(claim.ids, key.job_id) - 1) = 0
                                    AND get_bit(claim.dropped, array_position(claim.ids, key.job_id) - 1) = 0)
                UNION ALL
                SELECT 'step of ' || step.job_id FROM workrow_step AS step
                WHERE EXISTS (SELECT 1 FROM workrow_outcome AS outcome
                              WHERE outcome.job_id = step.job_id AND outcome.status IN ('completed', 'cancelled'))
                """, String.class)).as("running keys of closed positions, steps of finished jobs").isEmpty();
    }

    private String statusOf(long id) {
        return database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }

    /** A worker thread's loop; {@code worker} is its name. */
    @FunctionalInterface
    private interface WorkerLoop {
        void run(String worker) throws Exception;
    }

    /** Runs {@code count} workers at once ("node-0", "node-1", ...) and waits for all, failing with the first failure. */
    private static void workersAtOnce(int count, WorkerLoop loop) throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(count);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < count; w++) {
                String worker = "node-" + w;
                done.add(workers.submit(() -> {
                    loop.run(worker);
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get(120, TimeUnit.SECONDS);
            }
        } finally {
            workers.shutdownNow();
        }
    }

    @Test
    void aBatchIsClaimedUnderOneClaimRowAndEachEndMovesItsJobToItsNextHome() {
        List<Long> ids = enqueue("mail", 4);
        store.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}", null, 3_600_000, 3)));

        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);

        assertThat(claimed).extracting(ClaimedPosition::id).containsExactlyElementsOf(ids);
        assertThat(claimed).extracting(ClaimedPosition::position).containsExactly(1, 2, 3, 4);
        assertThat(claimed).extracting(ClaimedPosition::token).containsOnly(claimed.get(0).token());
        assertThat(claimed).extracting(ClaimedPosition::attempt).containsOnly(1);
        assertThat(claimed.get(0).payloadJson()).isEqualTo("{\"n\": 1}");
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_claim", Integer.class)).isOne();
        assertThat(statusOf(ids.get(0))).isEqualTo("running");

        Map<PositionEnd, EndResult> first = store.endMany(List.of(
                PositionEnd.completed(claimed.get(0)),
                PositionEnd.failed(claimed.get(1), "boom: once", Duration.ZERO),
                PositionEnd.failed(claimed.get(2), "boom: later", Duration.ofHours(1))));
        assertThat(first.values()).extracting(EndResult::status)
                .containsExactly(JobStatus.COMPLETED, JobStatus.PENDING, JobStatus.SCHEDULED);
        assertThat(database.jdbc().queryForObject("SELECT settled::text FROM workrow_claim", String.class))
                .isEqualTo("1110");

        Map<PositionEnd, EndResult> last = store.endMany(List.of(PositionEnd.discarded(claimed.get(3), "poison: no")));
        assertThat(last.values()).extracting(EndResult::status).containsExactly(JobStatus.DEAD);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_claim", Integer.class))
                .as("the batch's last end deletes its claim row").isZero();

        assertThat(ids).extracting(this::statusOf).containsExactly("completed", "pending", "scheduled", "dead");
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class,
                ids.get(1))).isEqualTo("boom: once");
        assertThat(database.jdbc().queryForList("SELECT status FROM workrow_outcome ORDER BY job_id", String.class))
                .containsExactly("completed", "failed", "failed", "dead");
        assertOneHomeEach();

        List<ClaimedPosition> retried = store.claim("mail", "node-b", 10, LEASE, false);
        assertThat(retried).extracting(ClaimedPosition::id).containsExactly(ids.get(1));
        assertThat(retried.get(0).attempt()).as("attempts are counted at claim").isEqualTo(2);
    }

    /**
     * A job that failed and then completed shows its last error and its time in workrow_job, and
     * a runbook's count by status over the view reads each home once: no finished job looks the
     * outcome log up again (a lookup per job took minutes at 10^4 finished jobs).
     */
    @Test
    void theViewShowsAFinishedJobsLastErrorFromItsOwnRowAndACountReadsTheLogOnce() {
        List<Long> ids = enqueue("mail", 2_000);
        ClaimedPosition failing = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        store.endMany(List.of(PositionEnd.failed(failing, "boom: once", Duration.ZERO)));
        java.sql.Timestamp failedAt = database.jdbc().queryForObject(
                "SELECT last_error_at FROM workrow_job WHERE id = ?", java.sql.Timestamp.class, ids.get(0));
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 2_000, LEASE, false);
        assertThat(store.endMany(claimed.stream().map(PositionEnd::completed).toList()).values())
                .allSatisfy(result -> assertThat(result.counted()).isTrue());

        assertThat(database.jdbc().queryForMap("SELECT status, attempts, last_error, last_error_at FROM workrow_job"
                + " WHERE id = ?", ids.get(0))).containsEntry("status", "completed").containsEntry("attempts", 2)
                .containsEntry("last_error", "boom: once").containsEntry("last_error_at", failedAt);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'completed'"
                + " AND last_error IS NULL", Integer.class)).isEqualTo(1_999);
        String plan = database.jdbc().queryForObject(
                "EXPLAIN (ANALYZE, FORMAT JSON) SELECT status, count(*) FROM workrow_job GROUP BY status", String.class);
        java.util.regex.Matcher scans = java.util.regex.Pattern
                .compile("\"Relation Name\": \"(workrow_outcome[^\"]*)\"[^{}]*?\"Actual Loops\": (\\d+)").matcher(plan);
        Map<String, Integer> loopsByPartition = new java.util.HashMap<>();
        while (scans.find()) {
            loopsByPartition.merge(scans.group(1), Integer.parseInt(scans.group(2)), Integer::sum);
        }
        assertThat(loopsByPartition).as("scans of the outcome log, by partition").isNotEmpty()
                .allSatisfy((partition, loops) -> assertThat(loops).isLessThanOrEqualTo(1));
    }

    @Test
    void anEndSentAgainAfterItsReplyWasLostCountsOnceAndIsToldFromALostLease() {
        List<Long> ids = enqueue("mail", 3);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);
        List<PositionEnd> ends = List.of(PositionEnd.completed(claimed.get(0)));

        assertThat(store.endMany(ends).values()).extracting(EndResult::verdict)
                .containsExactly(EndResult.Verdict.ACCEPTED);
        assertThat(store.endMany(ends).values()).extracting(EndResult::verdict)
                .containsExactly(EndResult.Verdict.ACCEPTED_BEFORE);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?",
                Integer.class, ids.get(0))).isOne();
        assertThat(database.jdbc().queryForObject("SELECT settled::text FROM workrow_claim", String.class))
                .as("the resend left the batch-mates' positions open").isEqualTo("100");

        assertThat(store.cancel("mail", ids.get(1))).isTrue();
        assertThat(database.jdbc().queryForObject("SELECT dropped::text FROM workrow_claim", String.class))
                .isEqualTo("010");
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(1)))).values())
                .extracting(EndResult::verdict).as("a cancelled job's end").containsExactly(EndResult.Verdict.REFUSED);
        assertThat(statusOf(ids.get(1))).isEqualTo("cancelled");
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(2)))).values())
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_claim", Integer.class))
                .as("the last open position's end deletes the claim row").isZero();
        assertThat(store.cancel("mail", ids.get(2))).as("a finished job").isFalse();
        assertThat(store.claim("mail", "node-a", 10, LEASE, false)).as("nothing left to run").isEmpty();
    }

    @Test
    void aFailureSentAgainMovesItsJobOnce() {
        long id = enqueue("mail", 1).get(0);
        ClaimedPosition claimed = store.claim("mail", "node-a", 10, LEASE, false).get(0);
        List<PositionEnd> failure = List.of(PositionEnd.failed(claimed, "boom: once", Duration.ZERO));

        assertThat(store.endMany(failure).values()).extracting(EndResult::verdict)
                .containsExactly(EndResult.Verdict.ACCEPTED);
        assertThat(store.endMany(failure).values()).extracting(EndResult::verdict)
                .containsExactly(EndResult.Verdict.ACCEPTED_BEFORE);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_ready WHERE id = ?", Integer.class, id))
                .isOne();
        assertOneHomeEach();
        assertOneHomeEach();
    }

    @Test
    void aClaimRowLockedInAnotherSessionMakesItsEndsBusyNotLost() throws Exception {
        enqueue("mail", 1);
        ClaimedPosition claimed = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        try (Connection operator = database.dataSource().getConnection()) {
            operator.setAutoCommit(false);
            try (Statement statement = operator.createStatement()) {
                statement.execute("SELECT * FROM workrow_claim FOR UPDATE");
            }
            assertThat(store.endMany(List.of(PositionEnd.completed(claimed))).values())
                    .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.BUSY);
            operator.rollback();
        }
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed))).values())
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED);
    }

    @Test
    void anExpiredClaimIsSweptWithEveryOpenPositionAndItsLateEndsAreRefused() throws Exception {
        List<Long> ids = enqueue("mail", 3);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, Duration.ofMillis(1), false);
        store.endMany(List.of(PositionEnd.completed(claimed.get(0))));
        Thread.sleep(20);

        List<MovedJob> moved = store.sweepExpiredLeases(100, List.of(), NO_BACKOFF);

        assertThat(moved).extracting(MovedJob::id).containsExactlyInAnyOrder(ids.get(1), ids.get(2));
        assertThat(moved).extracting(MovedJob::status).containsOnly(JobStatus.PENDING);
        assertThat(moved).extracting(MovedJob::leaseExpiries).containsOnly(1);
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(1)))).values())
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.REFUSED);
        assertThat(store.stillHeld(List.of(new ClaimLease(claimed.get(0).token(), LEASE, claimed))))
                .as("swept, not locked").isEmpty();
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class,
                ids.get(2))).isEqualTo("lease expired while held by node-a");
        assertThat(database.jdbc().queryForList("SELECT status FROM workrow_outcome ORDER BY job_id", String.class))
                .containsExactly("completed", "expired", "expired");
        assertOneHomeEach();
    }

    @Test
    void aHolderVouchingForALockedClaimKeepsItFromTheSweeperAndRenewalReportsCancelledPositions()
            throws Exception {
        List<Long> ids = enqueue("mail", 2);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, Duration.ofMillis(1), false);
        long token = claimed.get(0).token();
        Thread.sleep(20);
        try (Connection operator = database.dataSource().getConnection()) {
            operator.setAutoCommit(false);
            try (Statement statement = operator.createStatement()) {
                statement.execute("SELECT * FROM workrow_claim FOR KEY SHARE");
            }
            assertThat(store.renewLeases("node-a", List.of(new ClaimLease(token, LEASE, claimed)), LEASE))
                    .as("the row is locked: no renewal, but a vouch").isEmpty();
            assertThat(store.stillHeld(List.of(new ClaimLease(token, LEASE, claimed))))
                    .as("locked, not lost").containsExactly(token);
            operator.rollback();
        }
        assertThat(database.jdbc().queryForObject(
                "SELECT lease_expires_at < now() FROM workrow_claim", Boolean.class)).isTrue();
        assertThat(store.sweepExpiredLeases(100, List.of(), NO_BACKOFF))
                .as("expired, unlocked, but vouched for by a live holder").isEmpty();
        assertThat(store.cancel("mail", ids.get(1))).isTrue();
        assertThat(store.renewLeases("node-a", List.of(new ClaimLease(token, LEASE, claimed)), LEASE))
                .isEqualTo(Map.of(token, Set.of(2)));
        assertOneHomeEach();
    }

    @Test
    void idempotencyKeysGiveOneJobPerKeyAcrossConcurrentProducers() throws Exception {
        List<Long> first = store.insertMany(List.of(keyed("mail", "a"), job("mail"), keyed("mail", "a")));
        assertThat(first.get(2)).as("a key twice in one batch").isEqualTo(first.get(0));
        assertThat(store.insertMany(List.of(keyed("mail", "a"))).get(0)).isEqualTo(first.get(0));

        ExecutorService producers = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<Long>>> results = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            for (int p = 0; p < 4; p++) {
                int offset = p;
                results.add(producers.submit(() -> {
                    start.await();
                    List<NewJob> jobs = new ArrayList<>();
                    for (int k = 0; k < 200; k++) {
                        jobs.add(keyed("mail", "k" + ((k + offset * 50) % 200)));
                    }
                    return store.insertMany(jobs);
                }));
            }
            start.countDown();
            Map<String, Long> idByKey = new ConcurrentHashMap<>();
            for (int p = 0; p < 4; p++) {
                List<Long> ids = results.get(p).get(60, TimeUnit.SECONDS);
                for (int k = 0; k < 200; k++) {
                    Long previous = idByKey.putIfAbsent("k" + ((k + p * 50) % 200), ids.get(k));
                    assertThat(previous == null || previous.equals(ids.get(k))).isTrue();
                }
            }
        } finally {
            producers.shutdownNow();
        }
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_ready", Integer.class))
                .isEqualTo(2 + 200);
        assertOneHomeEach();
    }

    @Test
    void concurrentWorkersCompleteEveryJobExactlyOnce() throws Exception {
        int jobs = 3000;
        List<Long> ids = enqueue("bulk", jobs);
        Set<Long> ran = ConcurrentHashMap.newKeySet();
        List<Long> twice = new java.util.concurrent.CopyOnWriteArrayList<>();
        workersAtOnce(4, worker -> {
            List<ClaimedPosition> batch;
            while (!(batch = store.claim("bulk", worker, 50, LEASE, false)).isEmpty()) {
                for (ClaimedPosition job : batch) {
                    if (!ran.add(job.id())) {
                        twice.add(job.id());
                    }
                }
                // ends arrive in two flushes, as the result writer sends them
                int half = batch.size() / 2;
                List<PositionEnd> ends = batch.stream().map(PositionEnd::completed).toList();
                assertThat(store.endMany(ends.subList(0, half)).values()).allMatch(EndResult::counted);
                assertThat(store.endMany(ends.subList(half, ends.size())).values()).allMatch(EndResult::counted);
            }
        });
        assertThat(twice).isEmpty();
        assertThat(ran).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(database.jdbc().queryForObject(
                "SELECT count(DISTINCT job_id) = count(*) AND count(*) = ? FROM workrow_outcome WHERE status = 'completed'",
                Boolean.class, jobs)).isTrue();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_claim", Integer.class)).isZero();
        assertOneHomeEach();
    }

    @Test
    void cancelsRacingEndsSweepsAndClaimsNeverLeaveAJobInTwoHomesOrNone() throws Exception {
        int jobs = 400;
        // attempts enough that no swept job dies of it: every job ends completed or cancelled
        List<Long> ids = store.insertMany(IntStream.range(0, jobs)
                .mapToObj(i -> new NewJob("race", null, 0, 0, null, "{}", "{}", null, 0, 1000)).toList());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        Set<Long> cancelled = ConcurrentHashMap.newKeySet();
        Set<Long> completed = ConcurrentHashMap.newKeySet();
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            done.add(pool.submit(() -> {
                start.await();
                for (long id : ids) {
                    if (store.cancel("race", id)) {
                        cancelled.add(id);
                    }
                }
                return null;
            }));
            for (int w = 0; w < 2; w++) {
                String worker = "node-" + w;
                // half the claims' leases run out at once, so the sweeper races the ends and the cancels
                Duration lease = w == 0 ? LEASE : Duration.ofMillis(1);
                done.add(pool.submit(() -> {
                    start.await();
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    List<ClaimedPosition> batch;
                    while (System.nanoTime() < until) {
                        batch = store.claim("race", worker, 7, lease, false);
                        if (batch.isEmpty()) {
                            if (database.jdbc().queryForObject(
                                    "SELECT count(*) FROM workrow_ready", Integer.class) == 0
                                    && database.jdbc().queryForObject(
                                            "SELECT count(*) FROM workrow_claim", Integer.class) == 0) {
                                return null;
                            }
                            Thread.sleep(2);
                            continue;
                        }
                        Map<PositionEnd, EndResult> results =
                                store.endMany(batch.stream().map(PositionEnd::completed).toList());
                        results.forEach((end, result) -> {
                            if (result.counted()) {
                                completed.add(end.id());
                            }
                        });
                    }
                    return null;
                }));
            }
            done.add(pool.submit(() -> {
                start.await();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (System.nanoTime() < until && (completed.size() + cancelled.size() < jobs)) {
                    store.sweepExpiredLeases(100, List.of(), NO_BACKOFF);
                    Thread.sleep(1);
                }
                return null;
            }));
            start.countDown();
            for (Future<?> future : done) {
                future.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(completed).as("completed and cancelled").doesNotContainAnyElementsOf(cancelled);
        assertThat(completed.size() + cancelled.size()).isEqualTo(jobs);
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_outcome WHERE status IN ('completed', 'cancelled')", Integer.class))
                .isEqualTo(jobs);
        assertOneHomeEach();
    }

    @Test
    void dueScheduledJobsArePromotedToReady() {
        store.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}",
                java.time.Instant.now().minusSeconds(5), 0, 3)));
        long later = store.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}", null, 60_000, 3)))
                .get(0);
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now() - interval '1 second' WHERE id = ?", later);

        assertThat(store.promoteScheduled(100)).isEqualTo(Map.of("mail", 1));
        assertThat(statusOf(later)).isEqualTo("pending");
        assertOneHomeEach();
    }

    @Test
    void retentionDropsWholeDaysOfOutcomesAndAddingADayMovesItsRowsOutOfTheDefaultPartition() {
        assertThat(store.outcomeDaysAdd(3)).as("the migration created a week ahead").isEmpty();
        database.jdbc().update("""
                INSERT INTO workrow_outcome (job_id, attempt, queue, status, finished_at)
                SELECT n, 1, 'mail', 'completed', now() - interval '10 days' FROM generate_series(1, 50) AS n
                """);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome_default", Integer.class))
                .as("a day nobody created").isEqualTo(50);
        String day = database.jdbc().queryForObject(
                "SELECT to_char(((now() - interval '10 days') AT TIME ZONE 'UTC')::date, 'YYYYMMDD')", String.class);
        database.jdbc().queryForObject("SELECT workrow_add_outcome_day(((now() - interval '10 days') AT TIME ZONE"
                + " 'UTC')::date)", Boolean.class);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome_" + day, Integer.class))
                .isEqualTo(50);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome_default", Integer.class))
                .isZero();
        enqueue("mail", 1);
        store.endMany(List.of(PositionEnd.completed(store.claim("mail", "node-a", 1, LEASE, false).get(0))));

        assertThat(store.outcomeDaysDrop(Duration.ofDays(7))).containsExactly("workrow_outcome_" + day);
        assertThat(store.outcomeDaysDrop(Duration.ofDays(7))).isEmpty();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome", Integer.class))
                .as("today's outcome stays").isOne();
    }

    @Test
    void aDayLeftDetachedIsDroppedByTheNextPassAndThePartitionFunctionsTakeOnlyDaysOfTheLog() {
        var jdbc = database.jdbc();
        String day = jdbc.queryForObject(
                "SELECT to_char(((now() - interval '10 days') AT TIME ZONE 'UTC')::date, 'YYYYMMDD')", String.class);
        jdbc.queryForObject("SELECT workrow_add_outcome_day(((now() - interval '10 days') AT TIME ZONE 'UTC')::date)",
                Boolean.class);
        assertThatThrownBy(() -> jdbc.queryForObject("SELECT workrow_drop_outcome_day(?)", Object.class,
                "workrow_outcome_" + day)).hasMessageContaining("is still attached");
        // A pass that detached the day and failed before it dropped it.
        jdbc.queryForObject("SELECT workrow_detach_outcome_day(?)", Object.class, "workrow_outcome_" + day);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_outcome_" + day, Integer.class)).isZero();

        assertThat(store.outcomeDaysDrop(Duration.ofDays(7))).containsExactly("workrow_outcome_" + day);
        assertThat(jdbc.queryForObject("SELECT to_regclass(?) IS NULL", Boolean.class, "workrow_outcome_" + day))
                .isTrue();
        for (String function : List.of("workrow_detach_outcome_day", "workrow_drop_outcome_day")) {
            assertThatThrownBy(() -> jdbc.queryForObject("SELECT " + function + "('workrow_ready')", Object.class))
                    .hasMessageContaining("not a day of the outcome log: workrow_ready");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_ready", Integer.class)).isZero();
    }

    @Test
    void deletingFromTheViewDeletesEachJobFromEveryHomeAndDropsARunningOnesPosition() {
        var jdbc = database.jdbc();
        long waiting = enqueue("mail", 1).get(0);
        long keyedJob = store.insertMany(List.of(keyed("mail", "receipt-1"))).get(0);
        ClaimedPosition failedOnce = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        store.endMany(List.of(PositionEnd.failed(failedOnce, "boom", Duration.ofHours(1))));
        ClaimedPosition completed = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        store.endMany(List.of(PositionEnd.completed(completed)));
        long running = enqueue("mail", 1).get(0);
        ClaimedPosition held = store.claim("mail", "node-b", 1, LEASE, false).get(0);
        assertThat(held.id()).isEqualTo(running);
        long other = enqueue("other", 1).get(0);
        assertThat(List.of(failedOnce.id(), completed.id())).containsExactly(waiting, keyedJob);
        assertThat(statusOf(waiting)).isEqualTo("scheduled");

        assertThat(jdbc.update("DELETE FROM workrow_job WHERE queue = 'mail'")).isEqualTo(3);

        assertThat(jdbc.queryForList("SELECT id FROM workrow_job", Long.class)).containsExactly(other);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_outcome", Integer.class))
                .as("the history of the deleted jobs, the failed attempt's too").isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_job_data WHERE queue = 'mail'", Integer.class))
                .isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_job_key", Integer.class)).isZero();
        assertThat(store.endMany(List.of(PositionEnd.completed(held))).get(PositionEnd.completed(held)).verdict())
                .as("the running job's holder ends nothing").isNotIn(EndResult.Verdict.ACCEPTED,
                        EndResult.Verdict.ACCEPTED_BEFORE);
        assertThat(store.insertMany(List.of(keyed("mail", "receipt-1")))).as("the key is free again: a new job")
                .hasSize(1).doesNotContain(keyedJob);
    }

    private static final int[] ALL_BUCKETS = IntStream.range(0, 1024).toArray();

    private static NewJob ordered(String key) {
        return new NewJob("orders", key, key == null ? 0 : Math.floorMod(key.hashCode(), 1024), 0, null, "{}", "{}",
                null, 0, 3);
    }

    private List<ClaimedPosition> claimOrdered(boolean skipFailed) {
        return store.claimOrdered("orders", "node-a", 10, LEASE, false, ALL_BUCKETS, skipFailed);
    }

    @Test
    void anOrderedClaimRunsEachKeysOldestJobAloneAndTheKeyPassesOnWhenItEnds() {
        List<Long> ids = store.insertMany(List.of(ordered("a"), ordered("a"), ordered("b"), ordered(null),
                ordered("a"), ordered("b")));

        List<ClaimedPosition> first = claimOrdered(false);
        assertThat(first).extracting(ClaimedPosition::id).containsExactly(ids.get(0), ids.get(2), ids.get(3));
        assertThat(database.jdbc().queryForList("SELECT ordered_key FROM workrow_key_running ORDER BY 1", String.class))
                .containsExactly("a", "b");
        assertThat(claimOrdered(false)).as("both keys run").isEmpty();

        store.endMany(List.of(PositionEnd.completed(first.get(0)),
                PositionEnd.failed(first.get(1), "boom: b", Duration.ofHours(1))));
        assertThat(claimOrdered(false)).as("a's next; b's next waits behind its failed job")
                .extracting(ClaimedPosition::id).containsExactly(ids.get(1));
        assertThat(store.claimOrdered("orders", "node-a", 10, LEASE, false, ALL_BUCKETS, true))
                .as("unless failed keys are skipped").extracting(ClaimedPosition::id).containsExactly(ids.get(5));
        assertThat(store.cancel("orders", ids.get(1))).isTrue();
        assertThat(claimOrdered(false)).as("a cancelled job lets its key go")
                .extracting(ClaimedPosition::id).containsExactly(ids.get(4));
        assertOneHomeEach();
    }

    @Test
    void concurrentOrderedClaimersNeverRunTwoJobsOfAKeyAndRunEachKeyInOrder() throws Exception {
        int keys = 20;
        int perKey = 15;
        List<NewJob> jobs = new ArrayList<>();
        for (int n = 0; n < perKey; n++) {
            for (int k = 0; k < keys; k++) {
                jobs.add(ordered("key-" + k));
            }
        }
        store.insertMany(jobs);
        Map<String, String> running = new ConcurrentHashMap<>();
        Map<String, List<Long>> order = new ConcurrentHashMap<>();
        List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
        workersAtOnce(4, worker -> {
            long idleSince = System.nanoTime();
            while (System.nanoTime() - idleSince < TimeUnit.SECONDS.toNanos(3)) {
                List<ClaimedPosition> batch = store.claimOrdered("orders", worker, 5, LEASE, false, ALL_BUCKETS, false);
                if (batch.isEmpty()) {
                    Thread.sleep(1);
                    continue;
                }
                idleSince = System.nanoTime();
                for (ClaimedPosition job : batch) {
                    if (running.putIfAbsent(job.partitionKey(), worker) != null) {
                        violations.add(job.partitionKey() + " given to " + worker + " while running");
                    }
                    order.computeIfAbsent(job.partitionKey(), key -> new java.util.concurrent.CopyOnWriteArrayList<>())
                            .add(job.id());
                }
                // the key is let go here before the end commits, so a claim that sees it free
                // after the commit is never reported as a violation
                batch.forEach(job -> running.remove(job.partitionKey()));
                assertThat(store.endMany(batch.stream().map(PositionEnd::completed).toList()).values())
                        .allMatch(EndResult::counted);
            }
        });
        assertThat(violations).isEmpty();
        // From the log, without clocks (a claim's start is its statement's, which can precede by
        // its planning the commit of the end its snapshot then sees): each key's later job was
        // taken by a later claim, one claim never took two jobs of a key.
        assertThat(database.jdbc().queryForList("""
                SELECT data.partition_key || ': ' || later.job_id || ' (claim ' || later.claim_token || ') not after '
                       || earlier.job_id || ' (claim ' || earlier.claim_token || ')'
                FROM workrow_outcome AS earlier
                JOIN workrow_job_data AS data ON data.id = earlier.job_id
                JOIN workrow_job_data AS next ON next.partition_key = data.partition_key AND next.id > data.id
                JOIN workrow_outcome AS later ON later.job_id = next.id
                WHERE later.claim_token <= earlier.claim_token
                """, String.class)).as("from the log: each key's jobs taken by claims in their order").isEmpty();
        assertThat(order).hasSize(keys);
        order.forEach((key, ran) -> assertThat(ran).as("order of %s", key).hasSize(perKey).isSorted());
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_key_running", Integer.class)).isZero();
        assertOneHomeEach();
    }

    private static NewJob fair(String key) {
        return new NewJob("reports", null, 0, 0, null, "{}", "{}", null, 0, 3, key);
    }

    private static Map<String, Long> byKey(List<ClaimedPosition> claimed, Map<Long, String> keys) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        claimed.forEach(job -> counts.merge(keys.get(job.id()), 1L, Long::sum));
        return counts;
    }

    @Test
    void fairClaimsShareTheReadyRowsByTheirPolicies() {
        Map<Long, String> keys = new java.util.HashMap<>();
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(fair("a"));
            jobs.add(fair("b"));
        }
        List<Long> ids = store.insertMany(jobs);
        for (int i = 0; i < ids.size(); i++) {
            keys.put(ids.get(i), jobs.get(i).fairnessKey());
        }
        database.jdbc().update("INSERT INTO workrow_fairness_key (queue, fairness_key, weight) VALUES ('reports', 'a', 3)");

        List<ClaimedPosition> weighted = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            weighted.addAll(store.claimWeighted("reports", "node-a", 4, LEASE, false));
        }
        assertThat(byKey(weighted, keys)).as("weight 3 against 1").isEqualTo(Map.of("a", 12L, "b", 4L));
        assertThat(store.claimSpaced("reports", "node-a", 10, LEASE, false, 1))
                .as("one job per key, then a minute's spacing").hasSize(2);
        assertThat(store.claimSpaced("reports", "node-a", 10, LEASE, false, 1)).isEmpty();
        database.jdbc().update("DELETE FROM workrow_fairness_state");
        assertThat(byKey(store.claimBurst("reports", "node-a", 10, LEASE, false, 2), keys))
                .as("two a minute per key").isEqualTo(Map.of("a", 2L, "b", 2L));
        assertThat(store.claimBurst("reports", "node-a", 10, LEASE, false, 2)).isEmpty();
        assertOneHomeEach();
    }

    @Test
    void aHandlerLetGoIsRecoveredByItsQueuesRuleWhileItsBatchMatesRunOn() {
        List<Long> ids = enqueue("mail", 3);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);

        assertThat(store.endMany(List.of(PositionEnd.expired(claimed.get(0), Duration.ofHours(1), 0))).values())
                .extracting(EndResult::status).containsExactly(JobStatus.SCHEDULED);
        assertThat(store.endMany(List.of(PositionEnd.expired(claimed.get(1), Duration.ZERO, 1))).values())
                .as("max-lease-expiries 1: retired at once").extracting(EndResult::status)
                .containsExactly(JobStatus.DEAD);
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(0)))).values())
                .as("the let-go handler's late end").extracting(EndResult::verdict)
                .containsExactly(EndResult.Verdict.REFUSED);
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(2)))).values())
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED);
        assertThat(database.jdbc().queryForList("SELECT last_error FROM workrow_job WHERE id IN (?, ?) ORDER BY id",
                String.class, ids.get(0), ids.get(1))).containsExactly("lease expired while held by node-a",
                "lease expired 1 times; last held by node-a");
        assertThat(database.jdbc().queryForList(
                "SELECT attempts || '/' || lease_expiries FROM workrow_job WHERE id IN (?, ?) ORDER BY id",
                String.class, ids.get(0), ids.get(1))).as("the attempt spent, and given back")
                .containsExactly("1/1", "0/1");
        assertOneHomeEach();
    }

    /**
     * A dead job cancelled long after it died keeps its time of death, a day retention has no
     * partition for: its outcome row lands in the default partition, and retention deletes it
     * from there as it drops the days around it.
     */
    @Test
    void aDeadJobCancelledLongAfterItDiedIsRetiredFromTheDefaultPartition() {
        long id = enqueue("mail", 1).get(0);
        store.endMany(List.of(PositionEnd.discarded(store.claim("mail", "node-a", 1, LEASE, false).get(0), "boom: gone")));
        database.rows().setFinishedAt(id, java.time.Instant.now().minus(Duration.ofDays(20)));
        assertThat(store.cancelDead(List.of(id), "mail", null)).isOne();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome_default WHERE job_id = ?"
                + " AND status = 'cancelled'", Integer.class, id)).isOne();

        store.pruneFinished(Map.of(JobStatus.COMPLETED, Duration.ofDays(7), JobStatus.CANCELLED, Duration.ofDays(7)), 100);

        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?",
                Integer.class, id)).isZero();
    }

    /**
     * What a job carries from its waiting row through its claim to its end, as version 12's table
     * kept it: its due time (a release keeps it), its last error and that error's time, its step.
     */
    @Test
    void aJobCarriesItsDueTimeLastErrorAndStepThroughItsClaimsToItsEnd() {
        long id = enqueue("mail", 1).get(0);
        store.endMany(List.of(PositionEnd.failed(store.claim("mail", "node-a", 1, LEASE, false).get(0), "boom: once",
                Duration.ZERO)));
        Map<String, Object> waiting = database.jdbc().queryForMap(
                "SELECT run_at, last_error, last_error_at FROM workrow_job WHERE id = ?", id);
        String columns = "SELECT status, run_at, last_error, last_error_at, step, attempts, lease_expiries"
                + " FROM workrow_job WHERE id = ?";

        ClaimedPosition second = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        assertThat(second.lastError()).isEqualTo("boom: once");
        assertThat(database.jdbc().queryForMap(columns, id)).containsEntry("status", "running")
                .containsEntry("run_at", waiting.get("run_at")).containsEntry("last_error", "boom: once")
                .containsEntry("last_error_at", waiting.get("last_error_at"));
        assertThat(store.saveStep(second, "sent")).isTrue();
        store.endMany(List.of(PositionEnd.released(second)));
        assertThat(database.jdbc().queryForMap(columns, id)).as("released: as if never claimed")
                .containsEntry("status", "pending").containsEntry("run_at", waiting.get("run_at"))
                .containsEntry("last_error", "boom: once").containsEntry("last_error_at", waiting.get("last_error_at"))
                .containsEntry("attempts", 1);

        store.endMany(List.of(PositionEnd.completed(store.claim("mail", "node-a", 1, LEASE, false).get(0))));
        assertThat(database.jdbc().queryForMap(columns, id)).containsEntry("status", "completed")
                .containsEntry("run_at", waiting.get("run_at")).containsEntry("last_error", "boom: once")
                .containsEntry("last_error_at", waiting.get("last_error_at")).containsEntry("step", "sent")
                .containsEntry("attempts", 2).containsEntry("lease_expiries", 0);
    }

    /** A let-go on a node configured otherwise is recovered by the rule its queue declared, as a sweep is. */
    @Test
    void aHandlerLetGoFollowsTheRuleItsQueueDeclaredNotTheEndingNodes() {
        store.queueRules().declare("node-b", List.of(new RecoveryRule("mail", 600_000, 2.0, 3_600_000, 0.0, 2)));
        long id = enqueue("mail", 1).get(0);
        ClaimedPosition claimed = store.claim("mail", "node-a", 10, LEASE, false).get(0);

        // node-a would retry at once and count the attempt (no max-lease-expiries of its own)
        assertThat(store.endMany(List.of(PositionEnd.expired(claimed, Duration.ZERO, 0))).values())
                .extracting(EndResult::status).containsExactly(JobStatus.SCHEDULED);
        assertThat(database.jdbc().queryForMap("SELECT attempts, lease_expiries, run_at - now() > interval '9 minutes'"
                + " AND run_at - now() <= interval '10 minutes' AS declared_backoff FROM workrow_job WHERE id = ?", id))
                .as("the declared backoff, and the attempt given back under the declared limit")
                .containsEntry("attempts", 0).containsEntry("lease_expiries", 1).containsEntry("declared_backoff", true);

        database.rows().makeDue(id, Duration.ZERO);
        ClaimedPosition again = store.claim("mail", "node-a", 10, LEASE, false).get(0);
        assertThat(store.endMany(List.of(PositionEnd.expired(again, Duration.ZERO, 0))).values())
                .as("the declared limit of 2 reached").extracting(EndResult::status).containsExactly(JobStatus.DEAD);
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class, id))
                .isEqualTo("lease expired 2 times; last held by node-a");
        assertOneHomeEach();
    }

    @Test
    void deadJobsAreRetriedOrCancelledByFilterAndExhaustedWaitingJobsRetire() {
        List<Long> ids = enqueue("mail", 3);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);
        store.saveStep(claimed.get(0), "charged");
        store.endMany(List.of(PositionEnd.discarded(claimed.get(0), "poison: bad"),
                PositionEnd.discarded(claimed.get(1), "timeout: slow"),
                PositionEnd.failed(claimed.get(2), "boom: once", Duration.ZERO)));
        assertThat(ids).extracting(this::statusOf).containsExactly("dead", "dead", "pending");

        assertThat(store.retryDead(null, "mail", null, "poison")).isOne();
        assertThat(statusOf(ids.get(0))).isEqualTo("pending");
        assertThat(database.jdbc().queryForObject("SELECT step FROM workrow_job WHERE id = ?", String.class,
                ids.get(0))).as("a retried dead job resumes from its step").isEqualTo("charged");
        assertThat(store.cancelDead(List.of(ids.get(1)), "mail", null)).isOne();
        assertThat(statusOf(ids.get(1))).isEqualTo("cancelled");
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class,
                ids.get(1))).isEqualTo("timeout: slow");

        database.jdbc().update("UPDATE workrow_ready SET max_attempts = 1 WHERE id = ?", ids.get(2));
        assertThat(store.retireExhausted(100)).extracting(MovedJob::id).containsExactly(ids.get(2));
        assertThat(statusOf(ids.get(2))).isEqualTo("dead");
        assertOneHomeEach();
    }

    @Test
    void stepsAndLeaseExtensionsAreFencedByTheOpenPosition() {
        enqueue("mail", 2);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, Duration.ofSeconds(1), false);
        assertThat(store.saveStep(claimed.get(0), "one")).isTrue();
        assertThat(store.saveStep(claimed.get(0), "two")).isTrue();
        assertThat(store.extendLease(claimed.get(1), Duration.ofMinutes(10))).isTrue();
        assertThat(database.jdbc().queryForObject(
                "SELECT lease_expires_at > now() + interval '9 minutes' AND has_steps FROM workrow_claim", Boolean.class))
                .isTrue();
        store.endMany(List.of(PositionEnd.completed(claimed.get(0))));
        assertThat(store.saveStep(claimed.get(0), "three")).as("an ended position").isFalse();
        assertThat(store.extendLease(claimed.get(0), Duration.ofMinutes(20))).isFalse();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_step", Integer.class))
                .as("a completion clears the step").isZero();
    }

    @Test
    void theReadsSeeEveryHome() {
        List<Long> ids = enqueue("mail", 4);
        store.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}", null, 3_600_000, 3)));
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 3, LEASE, false);
        store.endMany(List.of(PositionEnd.completed(claimed.get(0)), PositionEnd.discarded(claimed.get(1), "poison: x")));

        QueueDepth depth = store.queueDepth().get(0);
        assertThat(List.of(depth.pending(), depth.due(), depth.scheduled(), depth.running(), depth.dead()))
                .containsExactly(1L, 1L, 1L, 1L, 1L);
        assertThat(store.listRunning("mail", 10)).extracting(io.workrow.queue.JobSummary::id)
                .containsExactly(ids.get(2));
        assertThat(store.listDead(null, "poison", 10)).extracting(io.workrow.queue.JobSummary::id)
                .containsExactly(ids.get(1));
        assertThat(store.deadErrorGroups("mail", 10)).extracting(io.workrow.queue.DeadErrorGroup::error)
                .containsExactly("poison");
        assertThat(store.find(ids.get(0)).orElseThrow().status()).isEqualTo(JobStatus.COMPLETED);
        assertThat(store.find(ids.get(2)).orElseThrow().claimedBy()).isEqualTo("node-a");
        assertThat(store.finishedPerMinute(java.time.Instant.now().minusSeconds(120)))
                .extracting(minute -> minute.completed() + "/" + minute.dead()).containsExactly("1/1");
    }

    @Test
    void theJobDataGrowsByRangePartitionsAheadOfTheIds() {
        String top = database.jdbc().queryForObject("""
                SELECT max(split_part(relname, '_', 4)::bigint) FROM pg_class
                WHERE relname ~ '^workrow_job_data_[0-9]+$'
                """, String.class);
        long high = database.jdbc().queryForObject("""
                SELECT max((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''(\\d+)''\\)'))[1]::bigint)
                FROM pg_inherits JOIN pg_class AS c ON c.oid = pg_inherits.inhrelid
                WHERE pg_inherits.inhparent = 'workrow_job_data'::regclass
                """, Long.class);
        assertThat(store.extendJobData(1000)).as("the newest range (from %s) is not half used", top).isEmpty();
        database.jdbc().queryForObject("SELECT setval('workrow_job_id_seq', ?)", Long.class, high + 5);
        long beyond = enqueue("mail", 1).get(0);
        assertThat(database.jdbc().queryForObject("SELECT tableoid::regclass::text FROM workrow_job_data WHERE id = ?",
                String.class, beyond)).as("maintenance fell behind").isEqualTo("workrow_job_data_default");

        assertThat(store.extendJobData(1000)).contains("workrow_job_data_" + high);
        assertThat(database.jdbc().queryForObject("SELECT tableoid::regclass::text FROM workrow_job_data WHERE id = ?",
                String.class, beyond)).as("moved out of the default").isEqualTo("workrow_job_data_" + high);
        assertThat(store.extendJobData(1000)).isEmpty();
        assertOneHomeEach();
    }

    /**
     * A range of jobs created a month ago: two finished then (dropped with the range, keys and
     * all), the rest still waiting, scheduled, running, dead, or finished within the retention,
     * which live on in the default partition; once one of those finishes before the cutoff too, the
     * next pass deletes it from the default.
     */
    @Test
    void retentionDropsAnOldIdRangeAndKeepsItsStragglersInTheDefault() {
        long high = database.jdbc().queryForObject("""
                SELECT max((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''(\\d+)''\\)'))[1]::bigint)
                FROM pg_inherits JOIN pg_class AS c ON c.oid = pg_inherits.inhrelid
                WHERE pg_inherits.inhparent = 'workrow_job_data'::regclass
                """, Long.class);
        database.jdbc().queryForObject("SELECT setval('workrow_job_id_seq', ?)", Long.class, high - 10);
        List<Long> ids = store.insertMany(IntStream.range(0, 7).mapToObj(i -> keyed("mail", "k" + i)).toList());
        String oldRange = database.jdbc().queryForObject(
                "SELECT tableoid::regclass::text FROM workrow_job_data WHERE id = ?", String.class, ids.get(0));
        assertThat(store.extendJobData(1000)).contains("workrow_job_data_" + high);
        database.jdbc().update("UPDATE workrow_job_data SET created_at = now() - interval '30 days' WHERE id = ANY (?)",
                (Object) ids.toArray(Long[]::new));
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);
        assertThat(claimed).extracting(ClaimedPosition::id).containsExactlyElementsOf(ids);
        store.endMany(List.of(PositionEnd.completed(claimed.get(0)), PositionEnd.completed(claimed.get(1)),
                PositionEnd.discarded(claimed.get(2), "poison"), PositionEnd.released(claimed.get(4)),
                PositionEnd.failed(claimed.get(5), "later", Duration.ofHours(1)),
                PositionEnd.completed(claimed.get(6))));
        monthOld(ids.get(0), ids.get(6));
        assertThat(store.retireJobData(Duration.ofDays(7))).as("ids may still land in it").doesNotContain(oldRange);
        database.jdbc().queryForObject("SELECT setval('workrow_job_id_seq', ?)", Long.class, high);

        assertThat(store.retireJobData(Duration.ofDays(7))).contains(oldRange)
                .doesNotContain("workrow_job_data_" + high);

        List<Long> kept = List.of(ids.get(1), ids.get(2), ids.get(3), ids.get(4), ids.get(5));
        assertThat(database.jdbc().queryForList("""
                SELECT id FROM workrow_job_data WHERE id = ANY (?) AND tableoid = 'workrow_job_data_default'::regclass
                ORDER BY id
                """, Long.class, (Object) ids.toArray(Long[]::new))).containsExactlyElementsOf(kept);
        assertThat(database.jdbc().queryForList("SELECT job_id FROM workrow_job_key ORDER BY job_id", Long.class))
                .as("the dropped jobs' keys, and only theirs, are gone").containsExactlyElementsOf(kept);
        assertThat(kept).extracting(this::statusOf)
                .containsExactly("completed", "dead", "running", "pending", "scheduled");
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(3)))).values())
                .extracting(EndResult::verdict).as("a straggler still ends").containsExactly(EndResult.Verdict.ACCEPTED);
        assertThat(store.retryDead(List.of(ids.get(2)), null, null, null)).isEqualTo(1);
        long again = store.insertMany(List.of(keyed("mail", "k0"))).get(0);
        assertThat(again).as("a dropped job's key is free again").isNotEqualTo(ids.get(0));
        assertThat(database.jdbc().queryForObject("SELECT tableoid::regclass::text FROM workrow_job_data WHERE id = ?",
                String.class, again)).as("new ids land in the new range").isEqualTo("workrow_job_data_" + high);

        monthOld(ids.get(1));
        store.retireJobData(Duration.ofDays(7));
        assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job_data WHERE id = ANY (?) ORDER BY id",
                Long.class, (Object) ids.toArray(Long[]::new)))
                .as("finished before the cutoff since: deleted from the default")
                .containsExactly(ids.get(2), ids.get(3), ids.get(4), ids.get(5));
        assertOneHomeEach();
    }

    @Test
    void queuesArePausedAndCountedAndOneJobIsEnqueuedByItsKey() {
        store.tableCheck();
        long first = store.insertOne(keyed("mail", "receipt-1"));
        assertThat(store.insertOne(keyed("mail", "receipt-1"))).as("the same key").isEqualTo(first);
        store.insertOne(job("reports"));
        store.pauseQueue("reports", "month end");
        store.pauseQueue("idle", "nothing yet");
        assertThat(store.pausedQueues()).containsExactly("idle", "reports");
        assertThat(store.queueStats()).extracting(stats -> stats.queue() + ":" + stats.pending() + ":" + stats.paused())
                .containsExactly("idle:0:true", "mail:1:false", "reports:1:true");
        assertThat(store.claim("reports", "node-a", 10, LEASE, false)).as("paused").isEmpty();
        assertThat(store.resumeQueue("reports")).isTrue();
        assertThat(store.resumeQueue("reports")).isFalse();
        assertThat(store.claim("reports", "node-a", 10, LEASE, false)).hasSize(1);
        store.resumeQueue("idle");
    }

    @Test
    void deadJobsPastTheirRetentionAreDeletedWithTheirSteps() {
        List<Long> ids = enqueue("mail", 2);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);
        assertThat(store.saveStep(claimed.get(0), "charged")).isTrue();
        store.endMany(List.of(PositionEnd.discarded(claimed.get(0), "poison"),
                PositionEnd.discarded(claimed.get(1), "poison")));
        database.jdbc().update("UPDATE workrow_dead SET finished_at = now() - interval '40 days' WHERE id = ?",
                ids.get(0));

        assertThat(store.pruneDead(Duration.ofDays(30), 100)).isEqualTo(1);

        assertThat(database.jdbc().queryForList("SELECT id FROM workrow_dead", Long.class)).containsExactly(ids.get(1));
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_step", Integer.class)).isZero();
        assertThat(store.pruneDead(Duration.ofDays(30), 100)).isZero();
    }

    /** Moves the outcomes of {@code ids} a month back, as if they had finished then. */
    private void monthOld(Long... ids) {
        database.jdbc().update("UPDATE workrow_outcome SET finished_at = now() - interval '30 days' WHERE job_id = ANY (?)",
                (Object) ids);
    }

    @Test
    void aLateEndIsToldFromAResendByItsKind() {
        enqueue("mail", 2);
        List<ClaimedPosition> claimed = store.claim("mail", "node-a", 10, LEASE, false);
        assertThat(store.endMany(List.of(PositionEnd.interrupted(claimed.get(0)))).values())
                .extracting(EndResult::status).containsExactly(JobStatus.PENDING);
        assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(0)))).values())
                .as("the handler finished after the shutdown interrupted it: not a resend")
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.REFUSED);
        List<PositionEnd> letGo = List.of(PositionEnd.expired(claimed.get(1), Duration.ZERO, 0));
        store.endMany(letGo);
        assertThat(store.endMany(letGo).values()).as("a let-go sent again")
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED_BEFORE);
        assertOneHomeEach();
    }

    @Test
    void aStepSavedByAnEarlierAttemptIsClearedWhenALaterOneCompletes() {
        long id = enqueue("mail", 1).get(0);
        ClaimedPosition first = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        store.saveStep(first, "charged");
        store.endMany(List.of(PositionEnd.failed(first, "boom: once", Duration.ZERO)));
        ClaimedPosition second = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        assertThat(second.step()).as("resumed").isEqualTo("charged");
        store.endMany(List.of(PositionEnd.completed(second)));
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_step WHERE job_id = ?", Integer.class,
                id)).isZero();
        assertOneHomeEach();
    }

    @Test
    void everyMoveRacingEveryOtherLeavesEachJobInOneHomeAndEndsItOnce() throws Exception {
        int jobs = 300;
        List<Long> ids = store.insertMany(IntStream.range(0, jobs)
                .mapToObj(i -> new NewJob("race", i % 3 == 0 ? "key-" + (i % 7) : null, i % 1024, 0, null, "{}", "{}",
                        null, 0, 1000)).toList());
        Set<Long> cancelled = ConcurrentHashMap.newKeySet();
        Set<Long> completed = ConcurrentHashMap.newKeySet();
        List<String> twice = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Long> claimedLately = new java.util.concurrent.CopyOnWriteArrayList<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        java.util.function.BooleanSupplier going = () -> System.nanoTime() < until
                && completed.size() + cancelled.size() < jobs;
        workersAtOnce(5, worker -> {
            java.util.Random random = new java.util.Random(worker.hashCode());
            switch (worker) {
                case "node-0" -> {
                    // the operator: cancels jobs, running ones most, and retries the dead
                    while (going.getAsBoolean()) {
                        int claimedSoFar = claimedLately.size();
                        long id = random.nextInt(4) > 0 && claimedSoFar > 0
                                ? claimedLately.get(claimedSoFar - 1 - random.nextInt(Math.min(claimedSoFar, 10)))
                                : ids.get(random.nextInt(jobs));
                        if (random.nextInt(3) == 0 && store.cancel("race", id)) {
                            if (!cancelled.add(id)) {
                                twice.add("cancelled twice: " + id);
                            }
                        }
                        store.retryDead(null, "race", null, null);
                        Thread.sleep(1);
                    }
                }
                case "node-1" -> {
                    // maintenance: promotion, the sweep (short leases run out), retirement
                    while (going.getAsBoolean()) {
                        store.promoteScheduled(100);
                        store.sweepExpiredLeases(100, List.of(), NO_BACKOFF);
                        store.retireExhausted(100);
                        Thread.sleep(1);
                    }
                }
                default -> {
                    boolean ordered = worker.equals("node-2");
                    Duration lease = worker.equals("node-4") ? Duration.ofMillis(5) : LEASE;
                    while (going.getAsBoolean()) {
                        List<ClaimedPosition> batch = ordered
                                ? store.claimOrdered("race", worker, 7, lease, false, ALL_BUCKETS, true)
                                : store.claim("race", worker, 7, lease, false);
                        List<PositionEnd> ends = new ArrayList<>();
                        batch.forEach(job -> claimedLately.add(job.id()));
                        if (!batch.isEmpty()) {
                            Thread.sleep(2); // the handlers run, and the operator may cancel one meanwhile
                        }
                        for (ClaimedPosition job : batch) {
                            int roll = random.nextInt(20);
                            ends.add(roll == 0 ? PositionEnd.discarded(job, "poison: roll")
                                    : roll == 1 ? PositionEnd.failed(job, "boom: roll", Duration.ofMillis(2))
                                    : roll == 2 ? PositionEnd.expired(job, Duration.ZERO, 0)
                                    : PositionEnd.completed(job));
                        }
                        while (!ends.isEmpty()) {
                            Map<PositionEnd, EndResult> results = store.endMany(ends);
                            results.forEach((end, result) -> {
                                if (result.counted() && end.kind() == PositionEnd.Kind.COMPLETED
                                        && !completed.add(end.id())) {
                                    twice.add("completed twice: " + end.id());
                                }
                            });
                            ends = ends.stream()
                                    .filter(end -> results.get(end).verdict() == EndResult.Verdict.BUSY).toList();
                        }
                        if (batch.isEmpty()) {
                            Thread.sleep(1);
                        }
                    }
                }
            }
        });
        assertThat(twice).isEmpty();
        assertThat(completed).as("completed and cancelled").doesNotContainAnyElementsOf(cancelled);
        assertThat(completed.size() + cancelled.size()).as("every job ended in 30 s").isEqualTo(jobs);
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_outcome WHERE status IN ('completed', 'cancelled')", Integer.class))
                .isEqualTo(jobs);
        assertOneHomeEach();
    }

    @Test
    void aTransactionalHandlersCompletionWaitsForItsClaimRowAndCommitsWithTheHandlersWork() throws Exception {
        enqueue("mail", 1);
        ClaimedPosition job = store.claim("mail", "node-a", 1, LEASE, false).get(0);
        try (Connection handler = database.dataSource().getConnection()) {
            handler.setAutoCommit(false);
            assertThat(store.completeInTransaction(handler, job, null)).isTrue();
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome", Integer.class))
                    .as("not before the handler commits").isZero();
            handler.rollback();
        }
        assertThat(statusOf(job.id())).as("rolled back with the handler's work").isEqualTo("running");
        try (Connection handler = database.dataSource().getConnection()) {
            handler.setAutoCommit(false);
            assertThat(store.completeInTransaction(handler, job, null)).isTrue();
            handler.commit();
        }
        assertThat(statusOf(job.id())).isEqualTo("completed");
        try (Connection late = database.dataSource().getConnection()) {
            assertThat(store.completeInTransaction(late, job, null)).as("once").isFalse();
        }
    }

    @Test
    void aTransactionalQueuesClaimHoldsEachJobInAClaimRowOfItsOwn() throws Exception {
        enqueue("mail", 3);
        store.insertMany(List.of(ordered("a"), ordered("b")));
        WriteOnceStore perJob = store.perJob();
        List<ClaimedPosition> claimed = perJob.claim("mail", "node-a", 10, LEASE, false);
        assertThat(claimed).extracting(ClaimedPosition::position).containsOnly(1);
        assertThat(claimed).extracting(ClaimedPosition::token).doesNotHaveDuplicates().hasSize(3);
        List<ClaimedPosition> keyed = perJob.claimOrdered("orders", "node-a", 10, LEASE, false, ALL_BUCKETS, false);
        assertThat(keyed).extracting(ClaimedPosition::token).doesNotHaveDuplicates().hasSize(2);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_key_running", Integer.class))
                .isEqualTo(2);
        try (Connection handler = database.dataSource().getConnection()) {
            handler.setAutoCommit(false);
            assertThat(perJob.completeInTransaction(handler, claimed.get(0), null)).isTrue();
            assertThat(store.endMany(List.of(PositionEnd.completed(claimed.get(1)))).values())
                    .as("a batch-mate's end while the handler's transaction is open")
                    .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED);
            handler.commit();
        }
        assertOneHomeEach();
    }
}

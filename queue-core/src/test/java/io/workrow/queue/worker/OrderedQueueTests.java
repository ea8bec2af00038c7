package io.workrow.queue.worker;

import io.workrow.queue.worker.cluster.BucketRing;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Ordered queues on real runtimes: every handler run is recorded in {@code ordered_runs} with its
 * start and end on the database's clock, and the assertions read that table.
 */
class OrderedQueueTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final JdbcTemplate jdbc = database.jdbc();
    private final List<WorkerRuntime> runtimes = new ArrayList<>();

    record Step(String key, int n, long millis) {
    }

    @BeforeAll
    static void createRunsTable() {
        database.jdbc().execute("""
                CREATE TABLE ordered_runs (
                    run_id      bigint GENERATED ALWAYS AS IDENTITY,
                    job_id      bigint NOT NULL,
                    key         text,
                    worker      text NOT NULL,
                    attempt     int NOT NULL,
                    started_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
                    finished_at timestamptz)
                """);
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        jdbc.update("DELETE FROM ordered_runs");
        jdbc.update("DELETE FROM workrow_worker");
    }

    @org.junit.jupiter.api.AfterEach
    void stopRuntimes() {
        runtimes.forEach(WorkerRuntime::stop);
    }

    /** Records the run, works for the step's time, records its end; {@code failing} decides whether it throws. */
    private io.workrow.queue.JobHandler<Step> recording(java.util.function.BiPredicate<Step, JobContext> failing) {
        return (step, job) -> {
            long run = jdbc.queryForObject("INSERT INTO ordered_runs (job_id, key, worker, attempt) VALUES (?, ?, ?, ?)"
                    + " RETURNING run_id", Long.class, job.id(), job.partitionKey(), Thread.currentThread().getName(),
                    job.attempt());
            Thread.sleep(step.millis());
            jdbc.update("UPDATE ordered_runs SET finished_at = clock_timestamp() WHERE run_id = ?", run);
            if (failing.test(step, job)) {
                throw new IllegalStateException("step " + step.n() + " of " + step.key() + " failed");
            }
        };
    }

    private WorkerRuntime start(String name, KeyOrdering ordering, io.workrow.queue.JobHandler<Step> handler) {
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .workerId(name)
                .pollInterval(Duration.ofMillis(200))
                .heartbeatInterval(Duration.ofMillis(200))
                .handler("ledger", Step.class, handler, QueueOptions.defaults()
                        .withConcurrency(8)
                        .withBackoff(new RetryBackoff(Duration.ofMillis(300), 1.0, Duration.ofMillis(300), 0.0))
                        .withOrdering(ordering))
                .build();
        runtimes.add(runtime);
        runtime.start();
        return runtime;
    }

    private List<Long> enqueue(List<Step> steps) {
        return jobQueue.enqueueAll(steps.stream()
                .map(step -> {
                    JobRequest request = JobRequest.of("ledger", step).maxAttempts(5);
                    return step.key() == null ? request : request.partitionKey(step.key());
                })
                .toList());
    }

    private int completed() {
        return jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class);
    }

    /** Runs of one key that started before the key's previous run ended, or out of id order. */
    private int orderViolations() {
        return jdbc.queryForObject("""
                SELECT count(*) FROM (
                    SELECT job_id, started_at,
                           lag(finished_at) OVER by_key AS previous_finished,
                           lag(job_id) OVER by_key AS previous_job
                    FROM ordered_runs WHERE key IS NOT NULL
                    WINDOW by_key AS (PARTITION BY key ORDER BY started_at)) AS runs
                WHERE started_at < previous_finished OR job_id < previous_job
                """, Integer.class);
    }

    /** The most runs that were going on at one moment. */
    private int mostAtOnce() {
        return jdbc.queryForObject("""
                SELECT coalesce(max(overlapping), 0) FROM (
                    SELECT count(*) AS overlapping FROM ordered_runs AS run
                    JOIN ordered_runs AS other ON other.started_at <= run.started_at
                                              AND coalesce(other.finished_at, 'infinity') > run.started_at
                    GROUP BY run.run_id) AS moments
                """, Integer.class);
    }

    @Test
    void aKeyRunsOneJobAtATimeInIdOrderAcrossTwoRuntimesWhileKeysRunInParallel() {
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            steps.add(new Step("account-" + (i % 8), i, 20));
        }
        enqueue(steps);
        start("ordered-1", KeyOrdering.BLOCK, recording((step, job) -> false));
        start("ordered-2", KeyOrdering.BLOCK, recording((step, job) -> false));

        await().atMost(Duration.ofSeconds(90)).until(() -> completed() == 1000);

        assertThat(jdbc.queryForObject("SELECT count(DISTINCT job_id) FROM ordered_runs", Integer.class)).isEqualTo(1000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM ordered_runs", Integer.class)).isEqualTo(1000);
        assertThat(orderViolations()).as("per key: start order is id order, no two runs overlap").isZero();
        assertThat(mostAtOnce()).as("different keys run at once").isGreaterThanOrEqualTo(4);
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT claimed_by) FROM workrow_job", Integer.class))
                .as("both runtimes ran jobs").isEqualTo(2);
    }

    @Test
    void blockHoldsAKeyUntilItsFailingJobCompletesWhileOtherKeysGoOn() {
        AtomicInteger failuresLeft = new AtomicInteger(2);
        List<Long> ids = enqueue(List.of(new Step("a", 1, 10), new Step("a", 2, 10), new Step("a", 3, 10),
                new Step("b", 1, 10), new Step("b", 2, 10)));
        start("blocking", KeyOrdering.BLOCK, recording((step, job) ->
                step.key().equals("a") && step.n() == 1 && failuresLeft.getAndDecrement() > 0));

        await().atMost(Duration.ofSeconds(20)).until(() -> completed() == 5);

        assertThat(jdbc.queryForList("SELECT job_id FROM ordered_runs WHERE key = 'a' ORDER BY started_at", Long.class))
                .containsExactly(ids.get(0), ids.get(0), ids.get(0), ids.get(1), ids.get(2));
        assertThat(jdbc.queryForObject("SELECT (SELECT max(started_at) FROM ordered_runs WHERE key = 'b')"
                + " < (SELECT max(started_at) FROM ordered_runs WHERE job_id = ?)", Boolean.class, ids.get(0)))
                .as("key b did not wait for key a's retries").isTrue();
        assertThat(orderViolations()).isZero();
    }

    @Test
    void skipLetsAKeyGoOnWhileItsFailingJobWaitsForItsRetry() {
        List<Long> ids = enqueue(List.of(new Step("a", 1, 10), new Step("a", 2, 10), new Step("a", 3, 10)));
        start("skipping", KeyOrdering.SKIP, recording((step, job) -> step.n() == 1 && job.attempt() == 1));

        await().atMost(Duration.ofSeconds(20)).until(() -> completed() == 3);

        assertThat(jdbc.queryForList("SELECT job_id FROM ordered_runs ORDER BY started_at", Long.class))
                .as("the failed first job steps aside for its 300 ms backoff, then runs")
                .containsExactly(ids.get(0), ids.get(1), ids.get(2), ids.get(0));
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM (
                    SELECT started_at, lag(finished_at) OVER (ORDER BY started_at) AS previous_finished
                    FROM ordered_runs) AS runs
                WHERE started_at < previous_finished
                """, Integer.class)).as("still one at a time").isZero();
    }

    @Test
    void jobsWithoutAKeyAreNotOrderedAndRunInParallel() {
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            steps.add(new Step(null, i, 300));
        }
        enqueue(steps);
        start("keyless", KeyOrdering.BLOCK, recording((step, job) -> false));
        await().atMost(Duration.ofSeconds(20)).until(() -> completed() == 16);
        assertThat(mostAtOnce()).isGreaterThanOrEqualTo(4);
    }

    @Test
    void aWorkerJoiningTakesAboutAFifthOfTheBucketsAndOneLeavingGivesUpOnlyItsOwnWhileNoKeyRunsTwice() {
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < 1600; i++) {
            steps.add(new Step("customer-" + (i % 64), i, 5));
        }
        enqueue(steps);
        List<WorkerRuntime> four = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            four.add(start("rebalance-" + i, KeyOrdering.BLOCK, recording((step, job) -> false)));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> partitionsExactly(four));
        Map<Integer, String> before = owners(four);

        WorkerRuntime fifth = start("rebalance-5", KeyOrdering.BLOCK, recording((step, job) -> false));
        List<WorkerRuntime> five = new ArrayList<>(four);
        five.add(fifth);
        await().atMost(Duration.ofSeconds(10)).until(() -> partitionsExactly(five));
        Map<Integer, String> afterJoin = owners(five);
        long moved = before.keySet().stream().filter(b -> !before.get(b).equals(afterJoin.get(b))).count();
        System.out.printf("a 5th worker joining 4 moved %d of 1024 buckets (1024/5 = 204.8)%n", moved);
        assertThat(moved).as("about a fifth: 1024/5 within 5 %% of the buckets").isBetween(154L, 256L);
        assertThat(before.keySet().stream().filter(b -> !before.get(b).equals(afterJoin.get(b))))
                .as("every moved bucket went to the new worker, none between the old ones")
                .allMatch(b -> afterJoin.get(b).equals("rebalance-5"));

        WorkerRuntime leaving = four.get(0);
        leaving.stop();
        List<WorkerRuntime> remaining = new ArrayList<>(five);
        remaining.remove(leaving);
        await().atMost(Duration.ofSeconds(10)).until(() -> partitionsExactly(remaining));
        Map<Integer, String> afterLeave = owners(remaining);
        long movedOnLeave = afterJoin.keySet().stream().filter(b -> !afterJoin.get(b).equals(afterLeave.get(b))).count();
        System.out.printf("a worker leaving 5 moved %d buckets, all of them its own%n", movedOnLeave);
        assertThat(afterJoin.keySet().stream().filter(b -> !afterJoin.get(b).equals(afterLeave.get(b))))
                .as("only the leaving worker's buckets moved")
                .allMatch(b -> afterJoin.get(b).equals("rebalance-1"));
        assertThat(movedOnLeave).isEqualTo(afterJoin.values().stream().filter("rebalance-1"::equals).count());

        await().atMost(Duration.ofSeconds(90)).until(() -> completed() == 1600);
        assertThat(orderViolations()).as("no key ran on two workers at once during the moves").isZero();
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT job_id) FROM ordered_runs", Integer.class)).isEqualTo(1600);
    }

    /** Whether the runtimes' owned buckets are disjoint and cover all 1,024. */
    private static boolean partitionsExactly(List<WorkerRuntime> runtimes) {
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (WorkerRuntime runtime : runtimes) {
            for (int bucket : runtime.ownedBuckets("ledger")) {
                if (!seen.add(bucket)) {
                    return false;
                }
            }
        }
        return seen.size() == BucketRing.BUCKETS;
    }

    private static Map<Integer, String> owners(List<WorkerRuntime> runtimes) {
        Map<Integer, String> owners = new ConcurrentHashMap<>();
        for (WorkerRuntime runtime : runtimes) {
            for (int bucket : runtime.ownedBuckets("ledger")) {
                owners.put(bucket, runtime.workerId());
            }
        }
        return owners;
    }
}

package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Claiming ahead of free handler slots: the jobs in line never run beyond the queue's concurrency,
 * keep their leases while they wait, go back unstarted at shutdown, and a job cancelled while it
 * waits never starts.
 */
class PrefetchTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Nap(long millis) {
    }

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @Test
    void twoRuntimesClaimingAheadRunEveryJobOnceAndNeverMoreHandlersThanTheirConcurrency() {
        List<JobRequest> requests = IntStream.range(0, 600)
                .mapToObj(i -> JobRequest.of("ahead", new Nap(i % 3))).toList();
        jobQueue.enqueueAll(requests);
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        List<WorkerRuntime> runtimes = new ArrayList<>();
        List<AtomicInteger> mostAtOnce = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            AtomicInteger atOnce = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            mostAtOnce.add(most);
            runtimes.add(WorkerRuntime.builder(database.dataSource())
                    .handler("ahead", Nap.class, (nap, job) -> {
                        most.accumulateAndGet(atOnce.incrementAndGet(), Math::max);
                        runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                        Thread.sleep(nap.millis());
                        atOnce.decrementAndGet();
                    }, QueueOptions.defaults().withConcurrency(4).withBatchSize(12).withPrefetch(8))
                    .build());
        }
        runtimes.forEach(WorkerRuntime::start);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 600);
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }

        assertThat(runs).hasSize(600);
        assertThat(runs.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
        assertThat(mostAtOnce).allSatisfy(most -> assertThat(most.get()).isBetween(1, 4));
        assertThat(database.jdbc().queryForObject("SELECT max(attempts) FROM workrow_job", Integer.class)).isEqualTo(1);
    }

    @Test
    void aJobWaitingInLineLongerThanItsLeaseKeepsItAndRunsOnce() {
        // One slot, four more in line, 700 ms each: the last waits about 2.8 s behind a 1 s lease.
        List<Long> ids = jobQueue.enqueueAll(IntStream.range(0, 5)
                .mapToObj(i -> JobRequest.of("line", new Nap(700))).toList());
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("line", Nap.class, (nap, job) -> {
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    Thread.sleep(nap.millis());
                }, QueueOptions.defaults().withConcurrency(1).withBatchSize(5).withPrefetch(4)
                        .withLease(Duration.ofSeconds(1)))
                .build();
        runtime.start();
        try {
            // The third job starts about 1.4 s after the claim: the last one's first lease is long gone.
            await().atMost(Duration.ofSeconds(5)).until(() -> runs.size() >= 3);
            Map<String, Object> last = row(ids.get(4));
            assertThat(last.get("status")).as("claimed ahead, waiting in line").isEqualTo("running");
            assertThat(runs).doesNotContainKey(ids.get(4));
            assertThat(database.jdbc().queryForObject("SELECT lease_expires_at > now() FROM workrow_job WHERE id = ?",
                    Boolean.class, ids.get(4))).as("renewed while it waits, past its first 1 s lease").isTrue();
            await().atMost(Duration.ofSeconds(15)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 5);
        } finally {
            runtime.stop();
        }
        assertThat(runs.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
        assertThat(database.jdbc().queryForList("SELECT attempts, lease_expiries FROM workrow_job"))
                .allSatisfy(row -> {
                    assertThat(row.get("attempts")).isEqualTo(1);
                    assertThat(row.get("lease_expiries")).isEqualTo(0);
                });
    }

    @Test
    void jobsStillInLineAtStopGoBackUnstartedWithTheirAttempts() throws Exception {
        List<Long> ids = jobQueue.enqueueAll(IntStream.range(0, 6)
                .mapToObj(i -> JobRequest.of("stop", new Nap(60_000))).toList());
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger handlerRuns = new AtomicInteger();
        Map<Long, Boolean> ran = new ConcurrentHashMap<>();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .shutdownTimeout(Duration.ofSeconds(1))
                .handler("stop", Nap.class, (nap, job) -> {
                    handlerRuns.incrementAndGet();
                    ran.put(job.id(), true);
                    started.countDown();
                    Thread.sleep(nap.millis());
                }, QueueOptions.defaults().withConcurrency(1).withBatchSize(6).withPrefetch(5))
                .build();
        runtime.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        // Held: one running, five in line (with no prefetch it would hold only the one).
        await().atMost(Duration.ofSeconds(5)).until(() -> runtime.inFlightCount() == 6);

        runtime.stop();

        assertThat(handlerRuns.get()).as("the five in line never started").isEqualTo(1);
        assertThat(ids).allSatisfy(id -> {
            Map<String, Object> row = row(id);
            assertThat(row.get("status")).isEqualTo("pending");
            assertThat(row.get("lease_token")).isNull();
            if (ran.containsKey(id)) {
                assertThat(row.get("attempts")).as("the interrupted one spent its attempt").isEqualTo(1);
                assertThat((String) row.get("last_error")).startsWith("interrupted by shutdown");
            } else {
                assertThat(row.get("attempts")).as("the ones in line got theirs back").isEqualTo(0);
                assertThat(row.get("last_error")).isNull();
            }
        });
        assertThat(runtime.inFlightCount()).isZero();
    }

    @Test
    void aJobCancelledWhileInLineNeverStarts() {
        List<Long> ids = jobQueue.enqueueAll(IntStream.range(0, 3)
                .mapToObj(i -> JobRequest.of("cancel", new Nap(1500))).toList());
        Map<Long, Boolean> ran = new ConcurrentHashMap<>();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("cancel", Nap.class, (nap, job) -> {
                    ran.put(job.id(), true);
                    Thread.sleep(nap.millis());
                }, QueueOptions.defaults().withConcurrency(1).withBatchSize(3).withPrefetch(2))
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 1 && runtime.inFlightCount() == 3);
            long waiting = ids.stream().filter(id -> !ran.containsKey(id)).findFirst().orElseThrow();
            assertThat(database.store().cancel("cancel", waiting)).isTrue();
            await().atMost(Duration.ofSeconds(15)).until(() -> runtime.inFlightCount() == 0);
            assertThat(ran).as("the cancelled job's handler never ran").doesNotContainKey(waiting).hasSize(2);
            assertThat(row(waiting).get("status")).isEqualTo("cancelled");
        } finally {
            runtime.stop();
        }
    }

    @Test
    void prefetchIsRefusedWhereItsLineWouldOutrunALimit() {
        QueueOptions options = QueueOptions.defaults().withPrefetch(4);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> options.withBreaker(BreakerOptions.defaults())))
                .hasMessageContaining("prefetch is not available with a circuit breaker");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> options.withFairness(
                new FairnessOptions(FairnessMode.SPACED, 60)))).hasMessageContaining("fairness.spaced");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> options.withFairness(
                new FairnessOptions(FairnessMode.BURST, 60)))).hasMessageContaining("fairness.burst");
        assertThat(options.withFairness(new FairnessOptions(FairnessMode.WEIGHTED, 60)).prefetch()).isEqualTo(4);
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }
}

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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Fair queues on real runtimes. Start times are the claim's {@code started_at} (the database's
 * clock); finishing order is counted by the handlers as they return.
 */
class FairQueueTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final JdbcTemplate jdbc = database.jdbc();
    private final List<WorkerRuntime> runtimes = new ArrayList<>();

    record Report(String tenant) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @AfterEach
    void stopRuntimes() {
        runtimes.forEach(WorkerRuntime::stop);
    }

    private void start(String name, FairnessOptions fairness, io.workrow.queue.JobHandler<Report> handler) {
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .workerId(name)
                .pollInterval(Duration.ofMillis(200))
                .handler("reports", Report.class, handler, QueueOptions.defaults()
                        .withConcurrency(8)
                        .withFairness(fairness))
                .build();
        runtimes.add(runtime);
        runtime.start();
    }

    private void enqueue(String tenant, int jobs) {
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            requests.add(JobRequest.of("reports", new Report(tenant)).fairnessKey(tenant));
        }
        for (int from = 0; from < jobs; from += 1000) {
            jobQueue.enqueueAll(requests.subList(from, Math.min(jobs, from + 1000)));
        }
    }

    /** A's jobs finished when the last of B's did, with A's 3,000 queued before B's 30. */
    private int aFinishedWhenBWasDone(FairnessOptions fairness) {
        enqueue("a", 3000);
        enqueue("b", 30);
        AtomicInteger aDone = new AtomicInteger();
        AtomicInteger bDone = new AtomicInteger();
        AtomicInteger aAtLastB = new AtomicInteger(-1);
        start("fair-1", fairness, (report, job) -> {
            Thread.sleep(1);
            if (report.tenant().equals("a")) {
                aDone.incrementAndGet();
            } else if (bDone.incrementAndGet() == 30) {
                aAtLastB.set(aDone.get());
            }
        });
        await().atMost(Duration.ofSeconds(60)).until(() -> aAtLastB.get() >= 0);
        return aAtLastB.get();
    }

    @Test
    void weightedLetsTheSmallTenantFinishBeforeAFifthOfTheBigOnesBacklog() {
        int aFinished = aFinishedWhenBWasDone(FairnessOptions.weighted());
        System.out.printf("weighted: B's 30th job finished after %d of A's 3,000%n", aFinished);
        assertThat(aFinished).isLessThan(600);
    }

    /** The control: the same backlog on a plain queue serves A's 3,000 first. */
    @Test
    void withoutFairnessTheSmallTenantWaitsBehindTheWholeBacklog() {
        int aFinished = aFinishedWhenBWasDone(FairnessOptions.NONE);
        assertThat(aFinished).isGreaterThan(2900);
    }

    /**
     * Two runtimes, A with 10,000 jobs and B with 50, both at 600 a minute. Runs until A has been
     * let through a second window, so a minute boundary is crossed: up to about 70 s.
     */
    @Test
    void burstStartsEveryOneOfBsJobsInTheFirstMinuteAndNoKeyExceedsItsRateInAnyMinute() {
        java.time.Instant begun = jdbc.queryForObject("SELECT now()", java.time.Instant.class);
        enqueue("a", 10_000);
        enqueue("b", 50);
        start("burst-1", FairnessOptions.burst(600), (report, job) -> { });
        start("burst-2", FairnessOptions.burst(600), (report, job) -> { });
        await().atMost(Duration.ofSeconds(80)).pollInterval(Duration.ofSeconds(1))
                .until(() -> started("a") > 600);
        runtimes.forEach(WorkerRuntime::stop);

        java.time.Instant lastOfB = jdbc.queryForObject(
                "SELECT max(started_at) FROM workrow_job WHERE fairness_key = 'b' AND started_at IS NOT NULL",
                java.time.Instant.class);
        System.out.printf("burst: B's 50th job started %d ms after the enqueue began%n",
                Duration.between(begun, lastOfB).toMillis());
        assertThat(started("b")).isEqualTo(50);
        assertThat(Duration.between(begun, lastOfB)).as("B's last start after the enqueue")
                .isLessThan(Duration.ofMinutes(1));
        List<Map<String, Object>> minutes = jdbc.queryForList("""
                SELECT fairness_key, date_trunc('minute', started_at) AS minute, count(*) AS started
                FROM workrow_job WHERE started_at IS NOT NULL GROUP BY 1, 2 ORDER BY 2, 1
                """);
        System.out.println("burst starts per key and minute: " + minutes);
        assertThat(minutes).filteredOn(row -> row.get("fairness_key").equals("a")).hasSizeGreaterThanOrEqualTo(2)
                .allSatisfy(row -> assertThat((Long) row.get("started")).as("%s", row).isLessThanOrEqualTo(600L));
    }

    private int started(String tenant) {
        return jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE fairness_key = ? AND started_at IS NOT NULL",
                Integer.class, tenant);
    }

    @Test
    void spacedStartsOneKeysJobsAtLeastHalfASecondApartAcrossTwoRuntimes() {
        enqueue("a", 12);
        start("spaced-1", FairnessOptions.spaced(120), (report, job) -> { });
        start("spaced-2", FairnessOptions.spaced(120), (report, job) -> { });
        await().atMost(Duration.ofSeconds(30)).until(() -> completed() == 12);
        Map<String, Object> gaps = jdbc.queryForMap("""
                SELECT min(gap) AS closest_ms, max(gap) AS widest_ms, count(DISTINCT claimed_by) AS workers
                FROM (SELECT claimed_by, extract(epoch FROM started_at - lag(started_at) OVER (ORDER BY started_at)) * 1000
                             AS gap
                      FROM workrow_job WHERE fairness_key = 'a') AS starts
                """);
        System.out.println("spaced at 120/min over two runtimes: " + gaps);
        assertThat(((Number) gaps.get("closest_ms")).doubleValue()).isGreaterThanOrEqualTo(500.0);
        assertThat(((Number) gaps.get("widest_ms")).doubleValue()).as("the pollers look again after one spacing")
                .isLessThan(1000.0);
    }

    private int completed() {
        return jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class);
    }
}

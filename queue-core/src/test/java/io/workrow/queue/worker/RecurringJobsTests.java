package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.RecurringJob;
import io.workrow.queue.RecurringStatus;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Recurring jobs on several runtimes at once, after downtime, and what start-up refuses. */
class RecurringJobsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final String EVERY_TWO_SECONDS = "*/2 * * * * *";

    record Report(String kind) {
    }

    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_recurring");
    }

    @Test
    void threeRuntimesMakeOneJobPerTickAndEachRunsOnce() throws Exception {
        List<WorkerRuntime> runtimes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            runtimes.add(runtime(RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("nightly"))));
        }
        Instant from = Instant.now();
        runtimes.forEach(WorkerRuntime::start);
        try {
            Thread.sleep(20_000);
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }
        Instant until = Instant.now();
        List<Map<String, Object>> jobs = database.jdbc().queryForList(
                "SELECT id, run_at, status, idempotency_key FROM workrow_job WHERE queue = 'reports' ORDER BY run_at");
        System.out.printf("three runtimes, one entry every 2 s, %s: %d jobs%n", Duration.between(from, until),
                jobs.size());
        assertThat(jobs).hasSizeBetween(9, 11);
        assertThat(jobs.stream().map(job -> job.get("run_at")).distinct()).as("one job per tick").hasSize(jobs.size());
        for (Map<String, Object> job : jobs) {
            Instant tick = ((Timestamp) job.get("run_at")).toInstant();
            assertThat(tick.getEpochSecond() % 2).as("run_at is the tick").isZero();
            assertThat(tick.getNano()).isZero();
            assertThat(job.get("idempotency_key")).isEqualTo("workrow:recurring:report:" + tick);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> runs.size() >= jobs.size() - 1);
        assertThat(runs.values()).as("each run once").allSatisfy(count -> assertThat(count).hasValue(1));
        RecurringStatus status = new JdbcQueueAdmin(database.store()).recurringJobs().get(0);
        assertThat(status.name()).isEqualTo("report");
        assertThat(status.cron()).isEqualTo(EVERY_TWO_SECONDS);
        assertThat(status.lastTick()).isEqualTo(((Timestamp) jobs.get(jobs.size() - 1).get("run_at")).toInstant());
        assertThat(status.nextTick()).isAfter(status.lastTick());
    }

    @Test
    void aRuntimeStoppedAcrossFiveTicksCatchesUpWithOneJobNotFive() throws Exception {
        // Between the stop and the first tick after the restart: the last missed tick and that one.
        assertThat(ticksAcrossAStop(RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("catch-up"))))
                .hasSize(2);
    }

    @Test
    void withoutCatchUpMissedTicksAreSkipped() throws Exception {
        // Only the first tick after the restart.
        assertThat(ticksAcrossAStop(RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("skip"))
                .withoutCatchUp())).hasSize(1);
    }

    @Test
    void aRecurringJobNeedsAHandlerForItsQueueAndAValidCron() {
        assertThatThrownBy(() -> WorkerRuntime.builder(database.dataSource())
                .recurring(RecurringJob.of("orphan", EVERY_TWO_SECONDS, "nobody", new Report("x"))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'nobody'")
                .hasMessageContaining("no handler");
        assertThatThrownBy(() -> RecurringJob.of("bad", "every day", "reports", new Report("x")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Runs {@code job} until its first job, stops for five ticks, starts it again for a little more
     * than one tick; returns the ticks enqueued from the stop until one tick and a half after the
     * restart (missed ticks enqueued late carry their own tick as run_at).
     */
    private List<Instant> ticksAcrossAStop(RecurringJob job) throws Exception {
        WorkerRuntime first = runtime(job);
        first.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> count() >= 1);
        } finally {
            first.stop();
        }
        Instant stopped = Instant.now();
        Thread.sleep(10_500);
        Instant restarted = Instant.now();
        WorkerRuntime second = runtime(job);
        second.start();
        try {
            Thread.sleep(3_500);
        } finally {
            second.stop();
        }
        List<Instant> ticks = ticksBetween(stopped, restarted.plusMillis(2_500));
        System.out.printf("%s stopped %s, restarted %s: ticks %s%n", job, stopped, restarted, ticks);
        return ticks;
    }

    private List<Instant> ticksBetween(Instant from, Instant until) {
        return database.jdbc().queryForList("SELECT run_at FROM workrow_job WHERE queue = 'reports'"
                        + " AND run_at > ? AND run_at < ? ORDER BY run_at", Timestamp.class, Timestamp.from(from),
                Timestamp.from(until)).stream().map(Timestamp::toInstant).toList();
    }

    private long count() {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE queue = 'reports'", Long.class);
    }

    private WorkerRuntime runtime(RecurringJob job) {
        return WorkerRuntime.builder(database.dataSource())
                .handler("reports", Report.class, (report, context) -> runs.computeIfAbsent(context.id(),
                        id -> new AtomicInteger()).incrementAndGet(), QueueOptions.defaults())
                .recurring(job)
                .build();
    }
}

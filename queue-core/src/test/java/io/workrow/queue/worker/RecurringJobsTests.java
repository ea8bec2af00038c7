package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.RecurringJob;
import io.workrow.queue.RecurringStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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
        for (int i = 1; i < jobs.size(); i++) {
            assertThat(Duration.between(((Timestamp) jobs.get(i - 1).get("run_at")).toInstant(),
                    ((Timestamp) jobs.get(i).get("run_at")).toInstant())).as("no tick missed").isEqualTo(Duration.ofSeconds(2));
        }
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
        Gap gap = stopAcrossFiveTicks(RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("catch-up")),
                RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("catch-up")));
        // The last missed tick: the last even second before the restarted node declared the entry.
        Instant declared = gap.declared().truncatedTo(ChronoUnit.SECONDS);
        assertThat(gap.ticks()).as("only the last missed tick")
                .containsExactly(declared.minusSeconds(declared.getEpochSecond() % 2));
    }

    @Test
    void withoutCatchUpMissedTicksAreSkipped() throws Exception {
        RecurringJob skipping = RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("skip"))
                .withoutCatchUp();
        assertThat(stopAcrossFiveTicks(skipping, skipping).ticks()).isEmpty();
    }

    @Test
    void aScheduleChangedWhileStoppedCatchesUpNothingOfTheOldOne() throws Exception {
        Gap gap = stopAcrossFiveTicks(RecurringJob.of("report", EVERY_TWO_SECONDS, "reports", new Report("old")),
                RecurringJob.of("report", "1/2 * * * * *", "reports", new Report("new")));
        assertThat(gap.ticks()).isEmpty();
        assertThat(new JdbcQueueAdmin(database.store()).recurringJobs().get(0).cron()).isEqualTo("1/2 * * * * *");
    }

    @Test
    void aTickWhoseEnqueueFailsIsTriedAgainNotLost() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AtomicReference<Instant> failedTick = new AtomicReference<>();
        JdbcJobQueue real = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        JobQueue failingOnce = new JobQueue() {
            @Override
            public long enqueue(JobRequest request) {
                if (attempts.incrementAndGet() == 1) {
                    failedTick.set(request.runAt());
                    throw new IllegalStateException("the insert failed (test)");
                }
                return real.enqueue(request);
            }

            @Override
            public List<Long> enqueueAll(List<JobRequest> requests) {
                return real.enqueueAll(requests);
            }

            @Override
            public <T> java.util.Optional<T> result(long id, Class<T> type) {
                return real.result(id, type);
            }

            @Override
            public io.workrow.queue.JobBatch batch() {
                return real.batch();
            }
        };
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("reports", Report.class, (report, context) -> { }, QueueOptions.defaults())
                // Every 5 s: the retry a second later finds the failed tick still the latest due.
                .recurring(RecurringJob.of("report", "*/5 * * * * *", "reports", new Report("retried")))
                .producer(failingOnce)
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(15)).until(() -> count() >= 1);
        } finally {
            runtime.stop();
        }
        assertThat(attempts.get()).isGreaterThanOrEqualTo(2);
        // Had the failed attempt's advance committed without its job, the retry would find the tick
        // done and the tick would have no job.
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE queue = 'reports'"
                + " AND run_at = ?", Long.class, Timestamp.from(failedTick.get()))).as("the failed tick, enqueued on the retry")
                .isEqualTo(1L);
    }

    @Test
    void aRecurringJobNeedsAHandlerForItsQueueAValidCronAndAReadablePayload() {
        assertThatThrownBy(() -> WorkerRuntime.builder(database.dataSource())
                .recurring(RecurringJob.of("orphan", EVERY_TWO_SECONDS, "nobody", new Report("x"))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'nobody'")
                .hasMessageContaining("no handler");
        assertThatThrownBy(() -> RecurringJob.of("bad", "every day", "reports", new Report("x")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> WorkerRuntime.builder(database.dataSource())
                .handler("reports", Report.class, (report, context) -> { }, QueueOptions.defaults())
                .recurring(RecurringJob.of("unreadable", EVERY_TWO_SECONDS, "reports", List.of(1, 2))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unreadable")
                .hasMessageContaining("cannot be read as");
    }

    /**
     * When the restarted runtime declared the entry (the database's clock, which decides ticks),
     * and the ticks enqueued after the last one before the stop, up to that moment.
     */
    private record Gap(Instant declared, List<Instant> ticks) {
    }

    /**
     * Runs {@code before} until its first job, stops for more than five ticks, and starts
     * {@code after} at an odd second, half-way between two ticks, until its first tick; returns
     * the restart and the ticks enqueued after the last tick before the stop, up to the restart.
     */
    private Gap stopAcrossFiveTicks(RecurringJob before, RecurringJob after) throws Exception {
        WorkerRuntime first = runtime(before);
        first.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> count() >= 1);
        } finally {
            first.stop();
        }
        Instant lastBefore = database.jdbc().queryForObject(
                "SELECT max(run_at) FROM workrow_job WHERE queue = 'reports'", Timestamp.class).toInstant();
        Thread.sleep(10_500);
        long untilOddSecond = 1000 - System.currentTimeMillis() % 1000 + (Instant.now().getEpochSecond() % 2 == 0 ? 0 : 1000);
        Thread.sleep(untilOddSecond);
        Instant restarted = Instant.now();
        WorkerRuntime second = runtime(after);
        second.start();
        Instant declared;
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> declaredAt().isAfter(restarted));
            declared = declaredAt();
            await().atMost(Duration.ofSeconds(10)).until(() -> !ticksBetween(declared, Instant.now().plusSeconds(5))
                    .isEmpty());
        } finally {
            second.stop();
        }
        List<Instant> ticks = ticksBetween(lastBefore, declared.plusNanos(1_000));
        System.out.printf("%s, then %s: last tick before the stop %s, restarted %s, declared %s, ticks between %s%n",
                before, after, lastBefore, restarted, declared, ticks);
        return new Gap(declared, ticks);
    }

    private List<Instant> ticksBetween(Instant from, Instant until) {
        return database.jdbc().queryForList("SELECT run_at FROM workrow_job WHERE queue = 'reports'"
                        + " AND run_at > ? AND run_at < ? ORDER BY run_at", Timestamp.class, Timestamp.from(from),
                Timestamp.from(until)).stream().map(Timestamp::toInstant).toList();
    }

    private Instant declaredAt() {
        return new JdbcQueueAdmin(database.store()).recurringJobs().get(0).declaredAt();
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

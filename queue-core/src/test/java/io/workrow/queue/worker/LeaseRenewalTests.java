package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.maintenance.MaintenanceScheduler;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Handlers slower than their lease, leases lost while running, cancellation and timeouts. */
class LeaseRenewalTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Work(long millis) {
    }

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final Map<JobOutcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    private final QueueMetrics recording = new QueueMetrics() {
        @Override
        public void handled(String queue, JobOutcome outcome, Duration handlerTime) {
            outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
        }
    };

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @Test
    void handlersFourTimesLongerThanTheLeaseCompleteOnceWhileTheSweeperRuns() {
        List<Long> ids = List.of(jobQueue.enqueue("slow", new Work(4_000)), jobQueue.enqueue("slow", new Work(4_000)),
                jobQueue.enqueue("slow", new Work(4_000)), jobQueue.enqueue("slow", new Work(4_000)));
        AtomicInteger runs = new AtomicInteger();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(recording)
                .handler("slow", Work.class, (work, job) -> {
                    runs.incrementAndGet();
                    Thread.sleep(work.millis());
                }, QueueOptions.defaults().withConcurrency(4).withLease(Duration.ofSeconds(1)))
                .build();
        try (MaintenanceScheduler sweeper = new MaintenanceScheduler()
                .every(Duration.ofMillis(200), new StaleLeaseSweeper(database.store(), 100))) {
            sweeper.start();
            runtime.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 4);
        } finally {
            runtime.stop();
        }
        assertThat(runs.get()).isEqualTo(4);
        for (long id : ids) {
            assertThat(database.jdbc().queryForObject("SELECT attempts FROM workrow_job WHERE id = ?", Integer.class, id))
                    .isEqualTo(1);
        }
        assertThat(outcomes.get(JobOutcome.SUCCESS)).hasValue(4);
        assertThat(outcomes).doesNotContainKey(JobOutcome.LEASE_LOST);
    }

    @Test
    void aLostLeaseInterruptsTheHandlerAndItsResultIsNotWritten() throws Exception {
        long id = jobQueue.enqueue("steal", new Work(30_000));
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean sawLoss = new AtomicBoolean();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(recording)
                .handler("steal", Work.class, (work, job) -> {
                    running.countDown();
                    try {
                        Thread.sleep(work.millis());
                    } catch (InterruptedException e) {
                        sawLoss.set(job.isLeaseLost() && !job.isCancelled());
                    }
                    // Returns normally: a success that must not be recorded.
                }, QueueOptions.defaults().withLease(Duration.ofSeconds(3)))
                .build();
        runtime.start();
        try {
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            // Another worker took the job over (as after a sweep): a new owner and token.
            database.rows().stealLease(id, "thief");

            await().atMost(Duration.ofSeconds(5)).untilTrue(sawLoss); // within one renewal (1 s)
            await().atMost(Duration.ofSeconds(5)).until(() -> runtime.inFlightCount() == 0);
            Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
            assertThat(row.get("status")).isEqualTo("running");
            assertThat(row.get("claimed_by")).isEqualTo("thief");
            assertThat(outcomes.get(JobOutcome.LEASE_LOST)).hasValue(1);
            assertThat(outcomes).doesNotContainKey(JobOutcome.SUCCESS);
        } finally {
            runtime.stop();
        }
    }

    @Test
    void cancellingARunningJobInterruptsItsHandlerAtOnceAndCountsAsCancelled() throws Exception {
        long id = jobQueue.enqueue("cancel-me", new Work(60_000));
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean sawCancel = new AtomicBoolean();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(recording)
                .handler("cancel-me", Work.class, (work, job) -> {
                    running.countDown();
                    try {
                        Thread.sleep(work.millis());
                    } catch (InterruptedException e) {
                        sawCancel.set(job.isCancelled());
                        throw e;
                    }
                }, QueueOptions.defaults()) // a 5-minute lease: no renewal comes soon, the notification does
                .build();
        runtime.start();
        try {
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(new JdbcQueueAdmin(database.store()).cancel("cancel-me", id)).isTrue();
            await().atMost(Duration.ofSeconds(3)).untilTrue(sawCancel);
            await().atMost(Duration.ofSeconds(3)).until(() -> outcomes.containsKey(JobOutcome.CANCELLED));
            assertThat(outcomes).doesNotContainKeys(JobOutcome.LEASE_LOST, JobOutcome.FAILURE);
            assertThat(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id))
                    .isEqualTo("cancelled");
        } finally {
            runtime.stop();
        }
    }

    @Test
    void aHandlerPastItsTimeoutIsInterruptedAndTheAttemptFailsWithAClearError() {
        long id = jobQueue.enqueue("bounded", new Work(60_000));
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(recording)
                .handler("bounded", Work.class, (work, job) -> Thread.sleep(work.millis()),
                        QueueOptions.defaults().withTimeout(Duration.ofMillis(500))
                                .withBackoff(new RetryBackoff(Duration.ofHours(1), 2.0, Duration.ofHours(1), 0.0)))
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> "scheduled".equals(database.jdbc().queryForObject(
                    "SELECT status FROM workrow_job WHERE id = ?", String.class, id)));
            Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
            assertThat((String) row.get("last_error")).contains("TimeoutException")
                    .contains("longer than the queue's timeout of PT0.5S");
            assertThat(row.get("attempts")).isEqualTo(1);
            assertThat(outcomes.get(JobOutcome.FAILURE)).hasValue(1);
        } finally {
            runtime.stop();
        }
    }
}

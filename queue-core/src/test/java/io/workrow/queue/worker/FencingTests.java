package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobLeaseLostException;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class FencingTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JobStore store;
    private ClaimStore claims;
    private JdbcJobQueue jobQueue;
    private StaleLeaseSweeper sweeper;

    record Charge(int cents) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        store = database.store();
        claims = store.claims();
        jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        sweeper = new StaleLeaseSweeper(store, 100, io.workrow.queue.metrics.QueueMetrics.NOOP, Map.of(),
                new RetryBackoff(Duration.ofMillis(1), 1.0, Duration.ofMillis(1), 0.0));
    }

    private void expireLease(long id) {
        database.rows().expireLease(id);
    }

    private EndResult end(PositionEnd end) {
        return claims.endMany(List.of(end)).get(end);
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }

    @Test
    void lateCompleteAndLateFailAfterLeaseLossUpdateNothingAndLeaveTheNewOwnerAlone() {
        long id = jobQueue.enqueue("charge", new Charge(1200));
        ClaimedPosition byA = claims.claim("charge", "worker-a", 1, Duration.ofSeconds(30), false).get(0);
        expireLease(id);
        assertThat(sweeper.runOnce()).isEqualTo(1);
        awaitDueAgain(id);
        ClaimedPosition byB = claims.claim("charge", "worker-b", 1, Duration.ofSeconds(30), false).get(0);
        assertThat(byB.id()).isEqualTo(id);

        assertThat(end(PositionEnd.completed(byA)).counted()).isFalse();
        assertThat(end(PositionEnd.failed(byA, "late failure", Duration.ZERO)).counted()).isFalse();
        assertThat(end(PositionEnd.discarded(byA, "late discard")).counted()).isFalse();
        Map<String, Object> whileB = row(id);
        assertThat(whileB.get("status")).isEqualTo("running");
        assertThat(whileB.get("claimed_by")).isEqualTo("worker-b");
        assertThat(whileB.get("lease_token")).isEqualTo(byB.token());

        assertThat(end(PositionEnd.completed(byB)).counted()).isTrue();
        Map<String, Object> done = row(id);
        assertThat(done.get("status")).isEqualTo("completed");
        assertThat(done.get("claimed_by")).isEqualTo("worker-b");
        assertThat(done.get("attempts")).isEqualTo(2);
    }

    @Test
    void runtimeWhoseLeaseWasLostDoesNotRecordItsLateSuccess() throws Exception {
        long id = jobQueue.enqueue("charge", new Charge(1200));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        WorkerRuntime runtimeA = WorkerRuntime.builder(database.dataSource())
                .workerId("worker-a")
                .handler("charge", Charge.class, (charge, job) -> {
                    started.countDown();
                    release.await();
                }, QueueOptions.defaults().withConcurrency(1))
                .build();
        runtimeA.start();
        try {
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            expireLease(id);
            assertThat(sweeper.runOnce()).isEqualTo(1);
            awaitDueAgain(id);
            ClaimedPosition byB = claims.claim("charge", "worker-b", 1, Duration.ofSeconds(30), false).get(0);
            assertThat(end(PositionEnd.completed(byB)).counted()).isTrue();

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> runtimeA.inFlightCount() == 0);
        } finally {
            runtimeA.stop();
        }
        Map<String, Object> done = row(id);
        assertThat(done.get("status")).isEqualTo("completed");
        assertThat(done.get("claimed_by")).isEqualTo("worker-b");
        assertThat(done.get("attempts")).isEqualTo(2);
    }

    @Test
    void contextWritesFailOnceTheLeaseIsLostAndTheRetryResumesFromTheSavedStep() throws Exception {
        long id = jobQueue.enqueue("charge", new Charge(5));
        CountDownLatch firstAttemptWaiting = new CountDownLatch(1);
        CountDownLatch leaseGone = new CountDownLatch(1);
        List<String> stepsSeen = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("charge", Charge.class, (charge, job) -> {
                    stepsSeen.add(String.valueOf(job.step()));
                    if (job.attempt() > 1) {
                        job.saveStep("captured");
                        return;
                    }
                    job.saveStep("authorized");
                    job.extendLease(Duration.ofMinutes(2));
                    firstAttemptWaiting.countDown();
                    leaseGone.await();
                    try {
                        job.saveStep("captured");
                    } catch (RuntimeException e) {
                        thrown.set(e);
                        throw e;
                    }
                }, QueueOptions.defaults().withConcurrency(1))
                .build();
        runtime.start();
        try {
            assertThat(firstAttemptWaiting.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(row(id).get("step")).isEqualTo("authorized");
            expireLease(id);
            assertThat(sweeper.runOnce()).isEqualTo(1);
            leaseGone.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(row(id).get("status")));
        } finally {
            runtime.stop();
        }
        assertThat(thrown.get()).isInstanceOf(JobLeaseLostException.class).hasMessageContaining("job=" + id);
        assertThat(stepsSeen).containsExactly("null", "authorized");
        assertThat(row(id).get("step")).isEqualTo("captured");
        assertThat(row(id).get("attempts")).isEqualTo(2);
    }

    /** The sweeper scheduled the job after its (1 ms) backoff: wait until it is pending again. */
    private void awaitDueAgain(long id) {
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            store.promoteScheduled(10);
            return "pending".equals(row(id).get("status"));
        });
    }
}

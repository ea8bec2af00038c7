package io.workrow.queue.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.MicrometerQueueMetrics;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Jobs that nobody starts by their deadline are cancelled where they wait, at the deadline: ready
 * in a queue no node works, scheduled, or waiting for other jobs, with their dependents settled;
 * jobs already claimed, and jobs whose deadline a replacement moved, are left alone.
 */
class PastDeadlineCancellerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    record Task(String name) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    private PastDeadlineCanceller canceller(int batchSize) {
        return new PastDeadlineCanceller(database.store(), batchSize, new MicrometerQueueMetrics(registry));
    }

    private Instant databaseNow() {
        return database.jdbc().queryForObject("SELECT now()", Timestamp.class).toInstant();
    }

    /** Waits until the database's clock has passed {@code instant}. */
    private void waitPast(Instant instant) throws InterruptedException {
        while (!databaseNow().isAfter(instant)) {
            Thread.sleep(20);
        }
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT status, attempts, last_error FROM workrow_job WHERE id = ?", id);
    }

    private int deadlines() {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_deadline", Integer.class);
    }

    @Test
    void aReadyJobNobodyStartsIsCancelledAtItsDeadlineAndOthersAreLeftAlone() throws Exception {
        Instant now = databaseNow();
        Instant deadline = now.plusMillis(300);
        long expiring = jobQueue.enqueue(JobRequest.of("unworked", new Task("expiring")).expiresAt(deadline));
        long later = jobQueue.enqueue(JobRequest.of("unworked", new Task("later")).expiresAt(now.plusSeconds(3600)));
        long none = jobQueue.enqueue("unworked", new Task("none"));

        assertThat(canceller(100).runOnce()).as("before the deadline").isZero();
        assertThat(row(expiring)).containsEntry("status", "pending");
        waitPast(deadline);
        assertThat(canceller(100).runOnce()).isEqualTo(1);

        assertThat(row(expiring)).containsEntry("status", "cancelled").containsEntry("attempts", 0);
        assertThat((String) row(expiring).get("last_error")).startsWith("expired: ");
        assertThat(row(later)).containsEntry("status", "pending");
        assertThat(row(none)).containsEntry("status", "pending");
        assertThat(registry.counter("workrow.jobs.expired", "queue", "unworked").count()).isEqualTo(1.0);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?"
                + " AND status = 'cancelled'", Integer.class, expiring)).isEqualTo(1);
        assertThat(deadlines()).as("the passed deadline is gone, the later one kept").isEqualTo(1);
        assertThat(canceller(100).runOnce()).as("nothing twice").isZero();
    }

    @Test
    void aScheduledJobAndAJobWaitingForOthersAreCancelledWithTheirDependentsSettled() throws Exception {
        Instant now = databaseNow();
        Instant deadline = now.plusMillis(400);
        long scheduled = jobQueue.enqueue(JobRequest.of("unworked", new Task("scheduled"))
                .runAt(now.plusMillis(200)).expiresAt(deadline));
        long blocker = jobQueue.enqueue("unworked", new Task("blocker"));
        long waiting = jobQueue.enqueue(JobRequest.of("unworked", new Task("waiting")).after(blocker)
                .expiresAt(deadline));
        long needsIt = jobQueue.enqueue(JobRequest.of("unworked", new Task("needs-it")).after(waiting));
        long followsIt = jobQueue.enqueue(JobRequest.of("unworked", new Task("follows-it")).afterSettled(waiting));
        assertThat(row(scheduled)).containsEntry("status", "scheduled");
        assertThat(row(waiting)).containsEntry("status", "waiting");

        waitPast(deadline);
        assertThat(canceller(100).runOnce()).isEqualTo(2);

        assertThat(row(scheduled)).containsEntry("status", "cancelled");
        assertThat(row(waiting)).containsEntry("status", "cancelled");
        assertThat(row(needsIt)).as("after(): cancelled with it").containsEntry("status", "cancelled");
        assertThat(row(followsIt)).as("afterSettled(): free to run").containsEntry("status", "pending");
        assertThat(row(blocker)).containsEntry("status", "pending");
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_dependency WHERE waiter_id = ?",
                Integer.class, waiting)).as("the cancelled job waits for nothing any more").isZero();
    }

    @Test
    void aClaimedJobIsLeftToItsWorkerAndAMovedDeadlineIsKept() throws Exception {
        Instant now = databaseNow();
        Instant deadline = now.plusMillis(300);
        long claimed = jobQueue.enqueue(JobRequest.of("worked", new Task("claimed")).expiresAt(deadline));
        assertThat(database.store().claims().claim("worked", "a-worker", 1, Duration.ofMinutes(1), false))
                .hasSize(1);
        long debounced = jobQueue.enqueue(JobRequest.of("unworked", new Task("first")).idempotencyKey("k")
                .replaceWaiting().expiresAt(deadline));
        assertThat(jobQueue.enqueue(JobRequest.of("unworked", new Task("second")).idempotencyKey("k")
                .replaceWaiting().expiresAt(now.plusSeconds(3600)))).as("replaced").isEqualTo(debounced);

        waitPast(deadline);
        assertThat(canceller(100).runOnce()).isZero();

        assertThat(row(claimed)).as("its worker never starts it late; the sweep does not touch it")
                .containsEntry("status", "running");
        assertThat(row(debounced)).containsEntry("status", "pending");
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_deadline WHERE job_id = ?",
                Integer.class, debounced)).as("the moved deadline is noted").isEqualTo(1);
        assertThat(deadlines()).isEqualTo(1);
    }

    @Test
    void aJobAnOperatorsSessionHoldsLockedIsSkippedNotWaitedForAndCancelledOnceReleased() throws Exception {
        Instant deadline = databaseNow().plusMillis(300);
        long locked = jobQueue.enqueue(JobRequest.of("unworked", new Task("locked")).expiresAt(deadline));
        long free = jobQueue.enqueue(JobRequest.of("unworked", new Task("free")).expiresAt(deadline));
        waitPast(deadline);
        try (java.sql.Connection psql = database.dataSource().getConnection()) {
            psql.setAutoCommit(false);
            try (java.sql.Statement statement = psql.createStatement()) {
                statement.execute("SELECT * FROM workrow_ready WHERE id = " + locked + " FOR UPDATE");
            }
            long started = System.nanoTime();
            assertThat(canceller(100).runOnce()).isEqualTo(1);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("no wait for the lock")
                    .isLessThan(Duration.ofSeconds(5));
            assertThat(row(free)).containsEntry("status", "cancelled");
            assertThat(row(locked)).containsEntry("status", "pending");
            assertThat(deadlines()).as("the locked job's deadline kept for the next pass").isEqualTo(1);
            psql.rollback();
        }

        assertThat(canceller(100).runOnce()).isEqualTo(1);
        assertThat(row(locked)).containsEntry("status", "cancelled");
        assertThat(deadlines()).isZero();
    }

    @Test
    void passesOfManyNodesAtOnceCancelEachJobOnceAndLoopUntilNoneIsLeft() throws Exception {
        Instant deadline = databaseNow().plusMillis(500);
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            requests.add(JobRequest.of("unworked", new Task("job-" + i)).expiresAt(deadline));
        }
        jobQueue.enqueueAll(requests);
        // Deadlines of jobs that ended before them: taken and dropped, never counted as cancelled.
        long done = jobQueue.enqueue(JobRequest.of("gone", new Task("gone")).expiresAt(deadline));
        assertThat(database.store().cancel("gone", done)).isTrue();
        waitPast(deadline);

        int nodes = 4;
        ExecutorService pool = Executors.newFixedThreadPool(nodes);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> passes = new ArrayList<>();
        for (int node = 0; node < nodes; node++) {
            PastDeadlineCanceller canceller = new PastDeadlineCanceller(database.store(), 25, QueueMetrics.NOOP);
            passes.add(pool.submit(() -> {
                go.await();
                return canceller.runOnce();
            }));
        }
        go.countDown();
        int total = 0;
        for (Future<Integer> pass : passes) {
            total += pass.get();
        }
        pool.shutdown();

        assertThat(total).isEqualTo(600);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE queue = 'unworked'"
                + " AND status = 'cancelled'", Integer.class)).isEqualTo(600);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE queue = 'unworked'",
                Integer.class)).as("one outcome per job").isEqualTo(600);
        assertThat(deadlines()).isZero();
    }
}

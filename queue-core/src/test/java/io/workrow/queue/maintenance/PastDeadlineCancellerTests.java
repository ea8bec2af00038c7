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
        return new PastDeadlineCanceller(database.store(), batchSize, new MicrometerQueueMetrics(registry),
                LOOK_AGAIN);
    }

    /** How soon a test's canceller looks again at the deadline of a job a worker holds. */
    private static final Duration LOOK_AGAIN = Duration.ofMillis(200);

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
        assertThat(database.jdbc().queryForMap("SELECT attempt, status, error, error_at IS NOT NULL AS error_at,"
                + " finished_at IS NOT NULL AS finished, started_at, claim_token FROM workrow_outcome WHERE job_id = ?",
                expiring)).containsEntry("attempt", 0).containsEntry("status", "cancelled")
                .containsEntry("error", "expired: its deadline (expiresAt) passed before it started")
                .containsEntry("error_at", true).containsEntry("finished", true).containsEntry("started_at", null)
                .containsEntry("claim_token", null);
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
    void aJobHeldByAWorkerIsLeftToItAndCancelledOnceItComesBackToWaitPastItsDeadline() throws Exception {
        Instant deadline = databaseNow().plusMillis(300);
        long held = jobQueue.enqueue(JobRequest.of("worked", new Task("held")).expiresAt(deadline));
        assertThat(database.store().claims().claim("worked", "a-worker", 1, Duration.ofMinutes(1), false))
                .hasSize(1);
        waitPast(deadline);

        assertThat(canceller(100).runOnce()).isZero();
        assertThat(row(held)).as("its worker never starts it late; the sweep does not touch it")
                .containsEntry("status", "running");
        assertThat(database.jdbc().queryForObject("SELECT expires_at > now() FROM workrow_deadline WHERE job_id = ?",
                Boolean.class, held)).as("its deadline put off, to be looked at again").isTrue();
        // The worker dies; the sweeper gives the job back, to wait out its queue's backoff.
        database.rows().expireEveryLease();
        assertThat(new StaleLeaseSweeper(database.store(), 50).runOnce()).isEqualTo(1);
        assertThat(row(held)).containsEntry("status", "scheduled");
        Thread.sleep(LOOK_AGAIN.toMillis() + 50);

        assertThat(canceller(100).runOnce()).isEqualTo(1);
        assertThat(row(held)).containsEntry("status", "cancelled");
        assertThat(deadlines()).isZero();
    }

    @Test
    void aDeadlineMovedByReplacementsIsKeptAndAJobWithManyPassedDeadlinesIsCancelledAndSettledOnce()
            throws Exception {
        Instant now = databaseNow();
        long debounced = jobQueue.enqueue(JobRequest.of("unworked", new Task("first")).idempotencyKey("k")
                .replaceWaiting().expiresAt(now.plusMillis(200)));
        assertThat(jobQueue.enqueue(JobRequest.of("unworked", new Task("second")).idempotencyKey("k")
                .replaceWaiting().expiresAt(now.plusMillis(300)))).as("replaced").isEqualTo(debounced);
        long kept = jobQueue.enqueue(JobRequest.of("unworked", new Task("kept")).idempotencyKey("j")
                .replaceWaiting().expiresAt(now.plusMillis(200)));
        jobQueue.enqueue(JobRequest.of("unworked", new Task("kept, later")).idempotencyKey("j")
                .replaceWaiting().expiresAt(now.plusSeconds(3600)));
        long follows = jobQueue.enqueue(JobRequest.of("unworked", new Task("follows")).afterSettled(debounced));
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_deadline WHERE job_id = ?",
                Integer.class, debounced)).as("each deadline noted").isEqualTo(2);
        waitPast(now.plusMillis(300));

        assertThat(canceller(100).runOnce()).as("one job, two passed deadlines").isEqualTo(1);

        assertThat(row(debounced)).containsEntry("status", "cancelled");
        assertThat(row(kept)).as("its deadline was moved an hour on").containsEntry("status", "pending");
        assertThat(row(follows)).as("released once, not twice").containsEntry("status", "pending");
        assertThat(registry.counter("workrow.jobs.expired", "queue", "unworked").count()).isEqualTo(1.0);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?",
                Integer.class, debounced)).isEqualTo(1);
        assertThat(database.jdbc().queryForList("SELECT job_id FROM workrow_deadline", Long.class))
                .as("only the moved deadline still to come").containsExactly(kept);
    }

    @Test
    void aDeadJobRetriedPastItsDeadlineIsCancelledWhereItWaits() throws Exception {
        Instant deadline = databaseNow().plusMillis(300);
        long dead = jobQueue.enqueue(JobRequest.of("unworked", new Task("dead")).expiresAt(deadline));
        database.jdbc().update("UPDATE workrow_ready SET attempts = max_attempts WHERE id = ?", dead);
        assertThat(new ExhaustedJobRetirer(database.store(), 100).runOnce()).isEqualTo(1);
        waitPast(deadline);
        assertThat(canceller(100).runOnce()).as("a dead job is not waiting").isZero();
        assertThat(deadlines()).isZero();

        assertThat(database.store().retryDead(List.of(dead), null, null, null)).isEqualTo(1);
        assertThat(row(dead)).containsEntry("status", "pending");
        assertThat(canceller(100).runOnce()).isEqualTo(1);
        assertThat(row(dead)).containsEntry("status", "cancelled");
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
            assertThat(deadlines()).as("the locked job's deadline kept, to be looked at again").isEqualTo(1);
            psql.rollback();
        }
        Thread.sleep(LOOK_AGAIN.toMillis() + 50);

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

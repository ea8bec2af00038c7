package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.MicrometerQueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code JobRequest.expiresAt}: no attempt starts at or after a job's deadline, wherever the job
 * waits (ready, in a runtime's line, behind its dependencies), and the job is cancelled with the
 * reason; {@code JobRequest.timeout}: a job's own handler timeout in place of its queue's.
 */
class JobDeadlinesTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Set<String> started = ConcurrentHashMap.newKeySet();
    private WorkerRuntime runtime;

    record Task(String name, long napMillis) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.stop();
        }
    }

    private WorkerRuntime tasks(QueueOptions options) {
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .metrics(new MicrometerQueueMetrics(registry))
                .handler("tasks", Task.class, (task, job) -> {
                    started.add(task.name());
                    Thread.sleep(task.napMillis());
                }, options)
                .build();
        return runtime;
    }

    private Instant databaseNow() {
        return database.jdbc().queryForObject("SELECT now()", Timestamp.class).toInstant();
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT status, attempts, last_error, last_error_at FROM workrow_job"
                + " WHERE id = ?", id);
    }

    private double expiredCount() {
        return registry.counter("workrow.jobs.expired", "queue", "tasks").count();
    }

    @Test
    void aJobThatReachesItsWorkerPastItsDeadlineIsCancelledUnstartedWithTheReason() {
        Instant now = databaseNow();
        long late = jobQueue.enqueue(JobRequest.of("tasks", new Task("late", 0)).expiresAt(now.minusSeconds(1)));
        long inTime = jobQueue.enqueue(JobRequest.of("tasks", new Task("in-time", 0))
                .expiresAt(now.plus(Duration.ofHours(1))));
        long none = jobQueue.enqueue("tasks", new Task("none", 0));
        assertThat(database.jdbc().queryForObject("SELECT expires_at FROM workrow_job WHERE id = ?",
                java.sql.Timestamp.class, inTime).toInstant()).as("the view shows the deadline")
                .isEqualTo(now.plus(Duration.ofHours(1)));

        List<DrainedJob> runs = tasks(QueueOptions.defaults()).drain("tasks");

        assertThat(started).containsExactlyInAnyOrder("in-time", "none");
        assertThat(runs).filteredOn(run -> run.id() == late).singleElement().satisfies(run -> {
            assertThat(run.outcome()).isEqualTo(JobOutcome.EXPIRED);
            assertThat(run.status()).isEqualTo(JobStatus.CANCELLED);
        });
        assertThat(row(late)).containsEntry("status", "cancelled").containsEntry("attempts", 0);
        assertThat((String) row(late).get("last_error")).startsWith("expired: ");
        assertThat(row(late).get("last_error_at")).isNotNull();
        assertThat(row(inTime)).containsEntry("status", "completed");
        assertThat(row(none)).containsEntry("status", "completed");
        assertThat(expiredCount()).isEqualTo(1.0);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?",
                Integer.class, late)).as("one outcome, the cancellation").isEqualTo(1);
    }

    @Test
    void aJobWhoseDeadlinePassesWhileItWaitsInARuntimesLineNeverStarts() {
        // One handler slot and a fixed prefetch: both jobs are claimed together, the second waits
        // in line behind the first's 800 ms, and its deadline passes meanwhile.
        long blocker = jobQueue.enqueue(JobRequest.of("tasks", new Task("blocker", 800)).priority(-1));
        long waiting = jobQueue.enqueue(JobRequest.of("tasks", new Task("waiting", 0))
                .expiresAt(databaseNow().plusMillis(300)));
        tasks(QueueOptions.defaults().withConcurrency(1).withPrefetch(5)).start();

        await().atMost(Duration.ofSeconds(10)).until(() -> "cancelled".equals(row(waiting).get("status")));

        assertThat(started).containsExactly("blocker");
        assertThat(database.jdbc().queryForObject("SELECT count(DISTINCT claim_token) FROM workrow_outcome"
                + " WHERE job_id IN (?, ?)", Integer.class, blocker, waiting))
                .as("claimed together, before the deadline").isEqualTo(1);
        assertThat((String) row(waiting).get("last_error")).startsWith("expired: ");
    }

    @Test
    void theDeadlineIsCountedFromBeforeTheClaimWasSentSoTheRuntimeIsNeverLate() {
        Instant now = databaseNow();
        jobQueue.enqueue(JobRequest.of("tasks", new Task("two-seconds", 0)).expiresAt(now.plusSeconds(2)));
        jobQueue.enqueue(JobRequest.of("tasks", new Task("already", 0)).priority(1).expiresAt(now));

        long beforeSend = System.nanoTime();
        List<ClaimedPosition> claimed = database.store().claims().claim("tasks", "test", 2, Duration.ofMinutes(1),
                false);

        assertThat(claimed).hasSize(2);
        ClaimedPosition inTwoSeconds = claimed.stream().filter(job -> job.payloadJson().contains("two-seconds"))
                .findFirst().orElseThrow();
        ClaimedPosition already = claimed.stream().filter(job -> job.payloadJson().contains("already"))
                .findFirst().orElseThrow();
        // The database's now at the claim is later than at the enqueue: less than 2 s is left.
        assertThat(inTwoSeconds.startDeadlineNanos() - beforeSend).isLessThanOrEqualTo(2_000_000_000L)
                .isGreaterThan(1_000_000_000L);
        assertThat(inTwoSeconds.pastDeadline()).isFalse();
        assertThat(already.pastDeadline()).as("a deadline equal to the claim's time has passed").isTrue();
    }

    @Test
    void anExpiredJobCancelsTheJobsThatWaitForItToComplete() {
        long expired = jobQueue.enqueue(JobRequest.of("tasks", new Task("expired", 0))
                .expiresAt(databaseNow().minusSeconds(1)));
        long dependent = jobQueue.enqueue(JobRequest.of("tasks", new Task("dependent", 0)).after(expired));
        long settled = jobQueue.enqueue(JobRequest.of("tasks", new Task("settled", 0)).afterSettled(expired));

        tasks(QueueOptions.defaults()).drain("tasks");

        assertThat(row(expired)).containsEntry("status", "cancelled");
        assertThat(row(dependent)).containsEntry("status", "cancelled");
        assertThat(row(settled)).as("afterSettled runs after any end").containsEntry("status", "completed");
        assertThat(started).containsExactly("settled");
    }

    @Test
    void aFailedJobIsNotTriedAgainPastItsDeadline() {
        long id = jobQueue.enqueue(JobRequest.of("tasks", new Task("flaky", 0)).maxAttempts(3)
                .expiresAt(databaseNow().plusMillis(400)));
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("tasks", Task.class, (task, job) -> {
                    started.add(task.name() + "-" + job.attempt());
                    throw new IllegalStateException("partner down");
                }, QueueOptions.defaults().withBackoff(new RetryBackoff(Duration.ofMillis(600),
                        1.0, Duration.ofMillis(600), 0.0)))
                .build();

        runtime.drain("tasks");
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            runtime.drain("tasks");
            return "cancelled".equals(row(id).get("status"));
        });

        assertThat(started).containsExactly("flaky-1");
        assertThat((String) row(id).get("last_error")).startsWith("expired: ");
    }

    @Test
    void aDeadlineOrTimeoutThatCouldNeverWorkIsRefusedAtTheEnqueue() {
        Instant now = Instant.now();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> jobQueue.enqueue(JobRequest.of("tasks",
                new Task("never", 0)).runAt(now.plusSeconds(60)).expiresAt(now.plusSeconds(30))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("could never start");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> JobRequest.of("tasks", new Task("t", 0))
                .timeout(Duration.ofNanos(10))).hasMessageContaining("between 1 ms and PT8760H");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> JobRequest.of("tasks", new Task("t", 0))
                .timeout(Duration.ofDays(400))).hasMessageContaining("between 1 ms and PT8760H");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> JobRequest.of("tasks", new Task("t", 0))
                .expiresAt(Instant.parse("+10000-01-01T00:00:00Z"))).hasMessageContaining("no later than");
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isZero();
    }

    @Test
    void aJobsOwnTimeoutInterruptsItsHandlerInPlaceOfItsQueues() {
        long limited = jobQueue.enqueue(JobRequest.of("tasks", new Task("limited", 10_000)).maxAttempts(1)
                .timeout(Duration.ofMillis(300)));
        long unlimited = jobQueue.enqueue(JobRequest.of("tasks", new Task("unlimited", 700)).priority(1));

        List<DrainedJob> runs = tasks(QueueOptions.defaults()).drain("tasks");

        assertThat(runs).extracting(DrainedJob::id).containsExactly(limited, unlimited);
        assertThat(row(limited)).containsEntry("status", "dead");
        assertThat((String) row(limited).get("last_error")).contains("handler ran longer than its own timeout of PT0.3S");
        assertThat(row(unlimited)).as("the queue has no timeout").containsEntry("status", "completed");
        assertThat(database.jdbc().queryForList("SELECT timeout_ms FROM workrow_job WHERE id IN (?, ?) ORDER BY id",
                Long.class, limited, unlimited)).as("the view shows a job's own timeout").containsExactly(300L, null);
    }
}

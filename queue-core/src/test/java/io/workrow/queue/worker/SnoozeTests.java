package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.SnoozeJobException;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.MicrometerQueueMetrics;
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

/**
 * {@code SnoozeJobException}: the job runs again after the delay, its attempt given back and its
 * snoozes counted (through every move: the ends, the promotion, the sweeper), logged {@code snoozed} and counted by
 * {@code workrow.jobs.snoozed}; past the queue's max-snoozes a snooze fails its attempt.
 */
class SnoozeTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicInteger runs = new AtomicInteger();
    private WorkerRuntime runtime;

    record Poll(String file, int readyOnRun) {
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

    /** Snoozes for {@code delay} until its run number {@code readyOnRun}, then completes. */
    private WorkerRuntime polls(Duration delay, QueueOptions options) {
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .metrics(new MicrometerQueueMetrics(registry))
                .handler("polls", Poll.class, (poll, job) -> {
                    if (runs.incrementAndGet() < poll.readyOnRun()) {
                        throw new SnoozeJobException(delay);
                    }
                }, options)
                .build();
        return runtime;
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT job.status, job.attempts, job.max_attempts, job.last_error,"
                + " job.run_at > now() + interval '59 minutes' AND job.run_at < now() + interval '61 minutes'"
                + " AS in_an_hour, job.snoozes"
                + " FROM workrow_job AS job WHERE job.id = ?", id);
    }

    /** The attempts logged, without the hand-backs of a drain that found the job due again at once. */
    private List<String> outcomes(long id) {
        return database.jdbc().queryForList("SELECT status || ' ' || attempt || coalesce(' ' || error, '')"
                + " FROM workrow_outcome WHERE job_id = ? AND status <> 'released' ORDER BY finished_at", String.class,
                id);
    }

    private double snoozedCount() {
        return registry.counter("workrow.jobs.snoozed", "queue", "polls").count();
    }

    @Test
    void aSnoozeRunsTheJobAgainWithoutSpendingAnAttempt() {
        // One attempt only: were a snooze to spend it, the job would never complete.
        long id = jobQueue.enqueue(JobRequest.of("polls", new Poll("report.csv", 3)).maxAttempts(1));
        polls(Duration.ZERO, QueueOptions.defaults());

        List<DrainedJob> drained = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            // A job due again at once ends a drain: one run each.
            drained.addAll(runtime.drain("polls"));
        }

        assertThat(drained).extracting(DrainedJob::outcome)
                .containsExactly(JobOutcome.SNOOZED, JobOutcome.SNOOZED, JobOutcome.SUCCESS);
        assertThat(drained).extracting(DrainedJob::status)
                .containsExactly(JobStatus.PENDING, JobStatus.PENDING, JobStatus.COMPLETED);
        assertThat(row(id)).containsEntry("status", "completed").containsEntry("attempts", 1)
                .containsEntry("max_attempts", 1);
        assertThat(outcomes(id)).containsExactly("snoozed 1 snoozed for PT0S", "snoozed 1 snoozed for PT0S",
                "completed 1");
        assertThat(snoozedCount()).isEqualTo(2.0);
    }

    @Test
    void aSnoozeWithADelayIsScheduledForThenAndKeepsTheLastError() {
        long id = jobQueue.enqueue(JobRequest.of("polls", new Poll("report.csv", 99)));
        AtomicInteger calls = new AtomicInteger();
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("polls", Poll.class, (poll, job) -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("partner timed out");
                    }
                    throw new SnoozeJobException(Duration.ofHours(1));
                }, QueueOptions.defaults().withBackoff(new RetryBackoff(Duration.ofMillis(1), 1.0,
                        Duration.ofMillis(1), 0.0)))
                .build();

        runtime.drain("polls");
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now() WHERE id = ?", id);
        List<DrainedJob> second = runtime.drain("polls");

        assertThat(second).singleElement().satisfies(run -> {
            assertThat(run.outcome()).isEqualTo(JobOutcome.SNOOZED);
            assertThat(run.status()).isEqualTo(JobStatus.SCHEDULED);
        });
        assertThat(row(id)).containsEntry("status", "scheduled").containsEntry("in_an_hour", true)
                .containsEntry("attempts", 1).containsEntry("max_attempts", 5).containsEntry("snoozes", 1)
                .containsEntry("last_error", "java.lang.IllegalStateException: partner timed out");
    }

    @Test
    void pastTheQueuesMaxSnoozesTheNextSnoozeFailsTheAttempt() {
        long id = jobQueue.enqueue(JobRequest.of("polls", new Poll("never.csv", Integer.MAX_VALUE)).maxAttempts(1));
        polls(Duration.ZERO, QueueOptions.defaults().withMaxSnoozes(2));

        List<DrainedJob> drained = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            drained.addAll(runtime.drain("polls"));
        }

        assertThat(drained).extracting(DrainedJob::outcome)
                .containsExactly(JobOutcome.SNOOZED, JobOutcome.SNOOZED, JobOutcome.FAILURE);
        assertThat(row(id)).containsEntry("status", "dead").containsEntry("attempts", 1)
                .containsEntry("max_attempts", 1);
        assertThat((String) row(id).get("last_error"))
                .contains("snoozed 2 times, the most workrow.queues.polls.max-snoozes allows (2)");
        assertThat(snoozedCount()).isEqualTo(2.0);
    }

    @Test
    void theSnoozeCountSurvivesThePromotionAndALostLease() {
        long id = jobQueue.enqueue(JobRequest.of("polls", new Poll("report.csv", Integer.MAX_VALUE)));
        polls(Duration.ofHours(1), QueueOptions.defaults().withMaxSnoozes(2));
        runtime.drain("polls");
        // Due now: the drain's promotion moves it to ready with its count.
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now() WHERE id = ?", id);
        runtime.drain("polls");
        assertThat(database.jdbc().queryForObject("SELECT snoozes FROM workrow_scheduled WHERE id = ?", Integer.class,
                id)).isEqualTo(2);

        // Claimed by a node that dies: the sweeper hands the job back with its count.
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now() WHERE id = ?", id);
        database.store().promoteScheduled(100);
        assertThat(database.store().claims().claim("polls", "dead-node", 1, Duration.ofSeconds(1), false))
                .singleElement().satisfies(job -> assertThat(job.snoozes()).isEqualTo(2));
        database.jdbc().update("UPDATE workrow_claim SET lease_expires_at = now() - interval '1 second'");
        assertThat(new io.workrow.queue.maintenance.StaleLeaseSweeper(database.store(), 50).runOnce()).isEqualTo(1);
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now() WHERE id = ?", id);

        List<DrainedJob> third = runtime.drain("polls");

        assertThat(third).singleElement().satisfies(run -> assertThat(run.outcome()).isEqualTo(JobOutcome.FAILURE));
        assertThat((String) row(id).get("last_error")).contains("snoozed 2 times");
    }

    @Test
    void aSnoozesDelayMustNotBeNegative() {
        assertThatThrownBy(() -> new SnoozeJobException(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
        assertThatThrownBy(() -> new SnoozeJobException(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most PT8760H");
        assertThat(new SnoozeJobException(SnoozeJobException.MAX_DELAY).delay()).isEqualTo(Duration.ofDays(365));
        assertThatThrownBy(() -> QueueOptions.defaults().withMaxSnoozes(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max-snoozes");
    }
}

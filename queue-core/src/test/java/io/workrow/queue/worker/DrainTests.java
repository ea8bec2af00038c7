package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.payload.PayloadDecodingException;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** {@link WorkerRuntime#drain(String)}: a queue's due jobs run in the calling thread through the real result path. */
class DrainTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private WorkerRuntime runtime;

    record Mail(String to, String kind) {
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

    /** A runtime whose {@code mail} handler records the thread it ran on and does what the kind says. */
    private WorkerRuntime mailRuntime(QueueOptions options) {
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("mail", Mail.class, (mail, job) -> {
                    ran.add(mail.to() + "@" + Thread.currentThread().getName());
                    switch (mail.kind()) {
                        case "fail" -> throw new IllegalStateException("smtp refused " + mail.to());
                        case "discard" -> throw new DiscardJobException("no such mailbox: " + mail.to());
                        case "follow-up" -> jobQueue.enqueue("mail", new Mail(mail.to() + "-again", "ok"));
                        default -> {
                        }
                    }
                }, options)
                .build();
        return runtime;
    }

    private JobStatus statusOf(long id) {
        return JobStatus.fromColumn(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?",
                String.class, id));
    }

    @Test
    void runsEveryDueJobInTheCallingThreadAndReportsEachOutcomeAsRecorded() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults().withBackoff(
                new RetryBackoff(Duration.ofMinutes(1), 2, Duration.ofMinutes(5), 0)));
        long ok = jobQueue.enqueue("mail", new Mail("ada", "ok"));
        long failing = jobQueue.enqueue("mail", new Mail("bob", "fail"));
        long discarded = jobQueue.enqueue("mail", new Mail("cy", "discard"));
        long unreadable = jobQueue.enqueue("mail", Map.of("to", List.of("not", "a", "string")));
        long followedUp = jobQueue.enqueue("mail", new Mail("dee", "follow-up"));

        List<DrainedJob> runs = runtime.drain("mail");

        String testThread = Thread.currentThread().getName();
        assertThat(ran).containsExactly("ada@" + testThread, "bob@" + testThread, "cy@" + testThread,
                "dee@" + testThread, "dee-again@" + testThread);
        assertThat(runs).extracting(DrainedJob::id, DrainedJob::attempt, DrainedJob::outcome, DrainedJob::status)
                .startsWith(
                        tuple(ok, 1, JobOutcome.SUCCESS, JobStatus.COMPLETED),
                        tuple(failing, 1, JobOutcome.FAILURE, JobStatus.SCHEDULED),
                        tuple(discarded, 1, JobOutcome.DISCARDED, JobStatus.DEAD),
                        tuple(unreadable, 1, JobOutcome.DISCARDED, JobStatus.DEAD),
                        tuple(followedUp, 1, JobOutcome.SUCCESS, JobStatus.COMPLETED));
        assertThat(runs).hasSize(6);
        assertThat(runs.get(5).succeeded()).as("the job the follow-up enqueued, due at once").isTrue();
        assertThat(runs.get(1).cause()).isInstanceOf(IllegalStateException.class).hasMessage("smtp refused bob");
        assertThat(runs.get(1).error()).contains("smtp refused bob");
        assertThat(runs.get(2).cause()).isInstanceOf(DiscardJobException.class);
        assertThat(runs.get(3).cause()).isInstanceOf(PayloadDecodingException.class);
        for (DrainedJob run : runs) {
            assertThat(statusOf(run.id())).as(run.toString()).isEqualTo(run.status());
        }
        assertThat(runtime.inFlightCount()).isZero();
        assertThat(runtime.drain("mail")).as("the failed job waits out its one-minute backoff").isEmpty();
    }

    @Test
    void runsScheduledJobsOnceTheyAreDueAndNotBefore() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults());
        long later = jobQueue.enqueue(JobRequest.of("mail", new Mail("ed", "ok")).delay(Duration.ofHours(1)));
        long tomorrow = jobQueue.enqueue(JobRequest.of("mail", new Mail("flo", "ok"))
                .runAt(Instant.now().plus(Duration.ofDays(1))));

        assertThat(runtime.drain("mail")).isEmpty();
        database.rows().makeDue(later, Duration.ofSeconds(1));

        assertThat(runtime.drain("mail")).extracting(DrainedJob::id).containsExactly(later);
        assertThat(statusOf(tomorrow)).isEqualTo(JobStatus.SCHEDULED);
    }

    @Test
    void aFailedJobRunsOnceADrainEvenWhenItsBackoffEndsDuringIt() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults().withBackoff(
                new RetryBackoff(Duration.ofMillis(1), 1, Duration.ofMillis(1), 0)));
        long failing = jobQueue.enqueue("mail", new Mail("hank", "fail"));
        jobQueue.enqueue("mail", new Mail("iris", "follow-up"));

        assertThat(runtime.drain("mail")).extracting(DrainedJob::id).first().isEqualTo(failing);
        assertThat(ran).filteredOn(name -> name.startsWith("hank@")).hasSize(1);

        assertThat(runtime.drain("mail")).extracting(DrainedJob::id, DrainedJob::attempt)
                .containsExactly(tuple(failing, 2));
    }

    @Test
    void aFailedJobDueAgainAtOnceGoesBackUnstartedAndEndsTheDrain() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults().withBackoff(
                new RetryBackoff(Duration.ofNanos(400_000), 1, Duration.ofNanos(400_000), 0)));
        long failing = jobQueue.enqueue("mail", new Mail("kim", "fail"));

        assertThat(runtime.drain("mail")).extracting(DrainedJob::id, DrainedJob::outcome, DrainedJob::status)
                .containsExactly(tuple(failing, JobOutcome.FAILURE, JobStatus.PENDING));

        assertThat(ran).containsExactly("kim@" + Thread.currentThread().getName());
        assertThat(statusOf(failing)).isEqualTo(JobStatus.PENDING);
        assertThat(database.jdbc().queryForObject("SELECT attempts FROM workrow_job WHERE id = ?", Integer.class,
                failing)).as("the claim it was handed back from gave its attempt back").isEqualTo(1);
        assertThat(runtime.drain("mail")).extracting(DrainedJob::attempt).containsExactly(2);
    }

    @Test
    void refusesToRunInsideTheCallersTransaction() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults());
        long id = jobQueue.enqueue("mail", new Mail("jo", "ok"));
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));

        assertThatThrownBy(() -> transaction.executeWithoutResult(status -> runtime.drain("mail")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot run inside a transaction");
        assertThat(statusOf(id)).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void anOrderedQueueIsDrainedKeyByKeyInOrderWithoutAHeartbeat() {
        List<Integer> steps = new CopyOnWriteArrayList<>();
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("ledger", Integer.class, (step, job) -> steps.add(step),
                        QueueOptions.defaults().withOrdering(KeyOrdering.BLOCK))
                .build();
        for (int step = 1; step <= 6; step++) {
            jobQueue.enqueue(JobRequest.of("ledger", step).partitionKey("account:" + (step % 2)));
        }

        assertThat(runtime.drain("ledger")).hasSize(6).allMatch(DrainedJob::succeeded);

        assertThat(steps.stream().filter(step -> step % 2 == 0)).containsExactly(2, 4, 6);
        assertThat(steps.stream().filter(step -> step % 2 == 1)).containsExactly(1, 3, 5);
    }

    @Test
    void refusesAStartedRuntimeAnUnknownQueueAndAStoppedRuntime() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults());
        assertThatThrownBy(() -> runtime.drain("sms")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'sms'").hasMessageContaining("[mail]");
        runtime.start();
        assertThatThrownBy(() -> runtime.drain("mail")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("started").hasMessageContaining("workrow.auto-startup=false");
        runtime.stop();
        assertThatThrownBy(() -> runtime.drain("mail")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("stopped");
    }

    @Test
    void stopReleasesTheConnectionsADrainReservedAndTheRuntimeCannotStartAfter() {
        HikariDataSource pool = (HikariDataSource) database.dataSource();
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults());
        jobQueue.enqueue("mail", new Mail("gil", "ok"));

        assertThat(runtime.drain("mail")).hasSize(1);
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).as("writer and keeper reserved").isEqualTo(2);
        runtime.stop();

        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
        assertThatThrownBy(runtime::start).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("does not start again");
    }

    @Test
    void aRuntimeThatDrainedCanStillBeStartedAndItsPollersTakeOver() {
        WorkerRuntime runtime = mailRuntime(QueueOptions.defaults());
        jobQueue.enqueue("mail", new Mail("hal", "ok"));
        assertThat(runtime.drain("mail")).hasSize(1);

        runtime.start();
        long id = jobQueue.enqueue("mail", new Mail("ivy", "ok"));

        await().atMost(Duration.ofSeconds(10))
                .until(() -> statusOf(id) == JobStatus.COMPLETED);
        assertThat(ran).hasSize(2).last().asString().startsWith("ivy@workrow-mail-");
    }
}

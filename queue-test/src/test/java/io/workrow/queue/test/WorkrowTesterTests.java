package io.workrow.queue.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.test.app.Greeter;
import io.workrow.queue.test.app.Greeting;
import io.workrow.queue.test.app.GreetingApplication;
import io.workrow.queue.worker.DrainedJob;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.transaction.AfterTransaction;
import org.springframework.transaction.annotation.Transactional;

@WorkrowTest
@SpringBootTest(classes = GreetingApplication.class)
class WorkrowTesterTests {

    @Autowired
    WorkrowTester workrow;

    @Autowired
    Greeter greeter;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    WorkerRuntimeLifecycle workers;

    @Autowired
    JobQueue jobQueue;

    @BeforeEach
    void cleanUp() {
        jdbc.update("DELETE FROM workrow_job");
        jdbc.update("DELETE FROM greeted");
    }

    @Test
    void theClassHasADatabaseOfItsOwnAndTheWorkersDoNotStart() {
        assertThat(jdbc.queryForObject("SELECT current_database()", String.class))
                .startsWith("workrow_test_workrowtestertests_");
        assertThat(workers.isRunning()).isFalse();
        greeter.greetLater("ada", Duration.ZERO);
        assertThat(workrow.enqueued("greet")).as("nothing runs it in the background").hasSize(1);
    }

    @Test
    void assertEnqueuedMatchesThePayloadAsTheHandlersTypeAndTheKeysAndReturnsTheJob() {
        long id = greeter.greetLater("ada", Duration.ZERO);

        EnqueuedJob job = workrow.assertEnqueued(JobExpectation.on("greet")
                .payload(new Greeting("ada", "hello ada"))
                .partitionKey("person:ada")
                .idempotencyKey("greet-ada")
                .priority(0));

        assertThat(job.id()).isEqualTo(id);
        assertThat(job.status()).isEqualTo(JobStatus.PENDING);
        assertThat(job.payload()).isEqualTo(new Greeting("ada", "hello ada"));
        assertThat(job.maxAttempts()).as("workrow.queues.greet.max-attempts").isEqualTo(3);
        workrow.assertEnqueued(JobExpectation.on("greet").payload(Greeting.class, "greeting someone called ada",
                greeting -> greeting.name().equals("ada")));
        workrow.assertNotEnqueued(JobExpectation.on("greet").payload(new Greeting("bob", "hello bob")));
    }

    @Test
    void aFailedAssertionSaysWhatWasThereAndHowItDiffers() {
        greeter.greetLater("ada", Duration.ZERO);

        assertThatThrownBy(() -> workrow.assertEnqueued(JobExpectation.on("greet")
                .payload(new Greeting("ada", "hi ada")).partitionKey("person:ada").idempotencyKey("greet-bob")))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Expected a job on 'greet' with payload Greeting[name=ada, text=hi ada],"
                        + " partition key 'person:ada', idempotency key 'greet-bob' to be enqueued, but 1 job(s)")
                .hasMessageContaining("expected payload Greeting[name=ada, text=hi ada], but its payload is"
                        + " Greeting[name=ada, text=hello ada]")
                .hasMessageContaining("expected idempotency key 'greet-bob', but its idempotency key is 'greet-ada'")
                .satisfies(error -> assertThat(error.getMessage()).doesNotContain("partition key is"));
        assertThatThrownBy(() -> workrow.assertEnqueued(JobExpectation.on("wave")))
                .hasMessageContaining("no job waits on 'wave'");
        greeter.greetLater("bob", Duration.ZERO);
        assertThatThrownBy(() -> workrow.assertEnqueued(JobExpectation.on("greet")))
                .hasMessageContaining("Expected exactly one job enqueued as a job on 'greet', but 2 are");
        assertThatThrownBy(() -> workrow.assertNotEnqueued(JobExpectation.on("greet").partitionKey("person:bob")))
                .hasMessageContaining("Expected no job enqueued as a job on 'greet' with partition key 'person:bob'");
    }

    @Test
    void runAtIsCheckedToTheMicrosecondOrWithinATolerance() {
        Instant before = Instant.now();
        greeter.greetLater("ada", Duration.ofHours(1));

        EnqueuedJob job = workrow.assertEnqueued(JobExpectation.on("greet")
                .runAt(before.plus(Duration.ofHours(1)), Duration.ofSeconds(5)));

        assertThat(job.status()).isEqualTo(JobStatus.SCHEDULED);
        workrow.assertEnqueued(JobExpectation.on("greet").runAt(job.runAt()));
        // The database rounds to the microsecond: an instant with nanoseconds still matches.
        Instant withNanos = Instant.parse("2031-01-01T00:00:00.000000700Z");
        jobQueue.enqueue(JobRequest.of("greet", new Greeting("eve", "hello eve")).runAt(withNanos));
        workrow.assertEnqueued(JobExpectation.on("greet").partitionKey(null).runAt(withNanos));
        workrow.assertNotEnqueued(JobExpectation.on("greet").runAt(withNanos.plusNanos(2_000)));
        assertThatThrownBy(() -> workrow.assertEnqueued(JobExpectation.on("greet").runAt(job.runAt().plusMillis(1))))
                .hasMessageContaining("but it runs at " + job.runAt());
    }

    @Test
    @Transactional
    void insideTheTestsTransactionTheAssertionsSeeWhatItHasNotCommitted() {
        greeter.greetLater("uncommitted", Duration.ZERO);

        workrow.assertEnqueued(JobExpectation.on("greet").partitionKey("person:uncommitted"));
        assertThatThrownBy(() -> workrow.drain("greet")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot run inside a transaction");
    }

    @AfterTransaction
    void theRolledBackJobIsGone() {
        workrow.assertNotEnqueued(JobExpectation.on("greet").partitionKey("person:uncommitted"));
    }

    @Test
    void drainRunsTheRealHandlerInTheTestsThreadAndReportsEachOutcome() {
        long ada = greeter.greetLater("ada", Duration.ZERO);
        long nobody = greeter.greetLater("nobody", Duration.ZERO);
        long later = greeter.greetLater("later", Duration.ofHours(1));

        List<DrainedJob> runs = workrow.drain("greet");

        assertThat(runs).extracting(DrainedJob::id, DrainedJob::outcome, DrainedJob::status).containsExactly(
                tuple(ada, JobOutcome.SUCCESS, JobStatus.COMPLETED),
                tuple(nobody, JobOutcome.FAILURE, JobStatus.SCHEDULED));
        assertThat(runs.get(1).cause()).isInstanceOf(IllegalArgumentException.class).hasMessage("nobody to greet");
        assertThat(greeter.greeted("ada")).isTrue();
        assertThat(greeter.handlerThreads()).last().isEqualTo(Thread.currentThread().getName());
        assertThat(workrow.enqueued("greet")).extracting(EnqueuedJob::id).containsExactly(nobody, later);
        assertThat(workrow.drain("greet")).as("the failure waits out its one-minute backoff").isEmpty();
    }

    @Test
    void aJobWaitingForAnotherIsEnqueuedAsWaitingAndADrainOfBothQueuesRunsItOnceReleased() {
        long greeting = greeter.greetLater("ada", Duration.ZERO);
        long thanks = greeter.thankAfter(greeting, "ada");

        workrow.assertEnqueued(JobExpectation.on("thank").waiting().after(greeting));
        assertThatThrownBy(() -> workrow.assertEnqueued(JobExpectation.on("thank").after(greeting + 1)))
                .hasMessageContaining("expected after [" + (greeting + 1) + "], but it waits for [" + greeting + "]");
        assertThat(workrow.drain("thank")).as("not due while it waits").isEmpty();

        List<DrainedJob> runs = workrow.drain("greet", "thank");

        assertThat(runs).extracting(DrainedJob::id).containsExactly(greeting, thanks);
        assertThat(jobQueue.result(thanks, String.class)).contains("thanks ada");
    }

    /** The database the first test of this class ran on: the outer class's tests run before the nested ones. */
    private static final AtomicReference<String> firstDatabase = new AtomicReference<>();

    @BeforeEach
    void rememberTheFirstDatabase() {
        firstDatabase.compareAndSet(null, jdbc.queryForObject("SELECT current_database()", String.class));
    }

    @Nested
    class InANestedClass {

        @Autowired
        JdbcTemplate nestedJdbc;

        @Test
        void theEnclosingClassesDatabaseIsShared() {
            assertThat(nestedJdbc.queryForObject("SELECT current_database()", String.class))
                    .isEqualTo(firstDatabase.get()).startsWith("workrow_test_workrowtestertests_");
        }
    }

    @Nested
    class InAnotherNestedClass {

        @Autowired
        JdbcTemplate nestedJdbc;

        @Test
        void theEnclosingClassesDatabaseIsSharedStill() {
            assertThat(nestedJdbc.queryForObject("SELECT current_database()", String.class))
                    .isEqualTo(firstDatabase.get());
        }
    }
}

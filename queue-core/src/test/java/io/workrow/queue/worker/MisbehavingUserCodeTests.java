package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobHandler;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an application plugs into a run (error describer, observer, payload codec, the handler
 * itself) may throw anything, an {@code Error} included: every job still gets a recorded outcome
 * and leaves the runtime's in-flight set, through the pollers' path as users run it.
 */
class MisbehavingUserCodeTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Order(int number) {
    }

    private final JacksonPayloadCodec jackson = JacksonPayloadCodec.withDefaultMapper();
    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), jackson);

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    /** The README's redacting describer, which trips over an exception without a message. */
    private static final ErrorDescriber REDACTING = error -> error.getClass().getName() + ": "
            + error.getMessage().replaceAll("[0-9]{4,}", "****");

    @Test
    void aDescriberThatThrowsRecordsTheExceptionClassAndEndsTheRun() {
        WorkerRuntime.Builder builder = builder((order, job) -> {
            throw new IllegalStateException();
        }).errorDescriber(REDACTING);
        Map<String, Object> row = runOneJob(builder);
        assertThat(row.get("status")).isEqualTo("dead");
        assertThat(row.get("last_error")).isEqualTo("java.lang.IllegalStateException");
    }

    @Test
    void aDescriberThatWorksStillRedacts() {
        WorkerRuntime.Builder builder = builder((order, job) -> {
            throw new IllegalStateException("card 4111111111111111 declined");
        }).errorDescriber(REDACTING);
        assertThat(runOneJob(builder).get("last_error")).isEqualTo("java.lang.IllegalStateException: card **** declined");
    }

    @Test
    void aDescriberThatReturnsNullRecordsTheExceptionClass() {
        WorkerRuntime.Builder builder = builder((order, job) -> {
            throw new IllegalArgumentException("secret");
        }).errorDescriber(error -> null);
        assertThat(runOneJob(builder).get("last_error")).isEqualTo("java.lang.IllegalArgumentException");
    }

    @Test
    void anObserverThatCannotStartLeavesTheJobRunUnobserved() {
        AtomicInteger ran = new AtomicInteger();
        WorkerRuntime.Builder builder = builder((order, job) -> ran.incrementAndGet()).observer(job -> {
            throw new IllegalStateException("tracer not ready");
        });
        assertThat(runOneJob(builder).get("status")).isEqualTo("completed");
        assertThat(ran).hasValue(1);
    }

    @Test
    void anObserverWhoseRunThrowsAtEveryCallChangesNoOutcome() {
        JobObserver throwing = job -> new JobObserver.Run() {
            @Override
            public void outcome(JobOutcome outcome) {
                throw new IllegalStateException("outcome");
            }

            @Override
            public void error(Throwable error) {
                throw new StackOverflowError("error");
            }

            @Override
            public void leave() {
                throw new IllegalStateException("leave");
            }

            @Override
            public void close() {
                throw new IllegalStateException("close");
            }
        };
        assertThat(runOneJob(builder((order, job) -> { }).observer(throwing)).get("status")).isEqualTo("completed");
        Map<String, Object> failed = runOneJob(builder((order, job) -> {
            throw new IllegalStateException("declined");
        }).observer(throwing));
        assertThat(failed.get("status")).isEqualTo("dead");
        assertThat(failed.get("last_error")).isEqualTo("java.lang.IllegalStateException: declined");
    }

    @Test
    void aCodecThatThrowsSomethingElseThanADecodingErrorFailsTheAttempt() {
        Map<String, Object> row = runOneJob(builder((order, job) -> { })
                .codec(codecThrowing(new UnsupportedOperationException("codec bug"))));
        assertThat(row.get("status")).isEqualTo("dead");
        assertThat(row.get("last_error")).isEqualTo("java.lang.UnsupportedOperationException: codec bug");
    }

    @Test
    void anErrorWhileDecodingFailsTheAttempt() {
        Map<String, Object> row = runOneJob(builder((order, job) -> { })
                .codec(codecThrowing(new StackOverflowError())));
        assertThat(row.get("status")).isEqualTo("dead");
        assertThat(row.get("last_error")).isEqualTo("java.lang.StackOverflowError");
    }

    @Test
    void anErrorFromTheHandlerWithAThrowingDescriberFailsTheAttempt() {
        WorkerRuntime.Builder builder = builder((order, job) -> {
            throw new AssertionError();
        }).errorDescriber(REDACTING);
        assertThat(runOneJob(builder).get("last_error")).isEqualTo("java.lang.AssertionError");
    }

    /** An exception whose message cannot even be read: every log line and describer trips over it. */
    static final class Unprintable extends RuntimeException {
        @Override
        public String getMessage() {
            throw new IllegalStateException("no message for you");
        }
    }

    @Test
    void anExceptionWhoseMessageThrowsStillEndsInARecordedOutcome() {
        Map<String, Object> row = runOneJob(builder((order, job) -> {
            throw new Unprintable();
        }));
        assertThat(row.get("status")).isEqualTo("dead");
        assertThat(row.get("last_error")).isEqualTo(Unprintable.class.getName());
    }

    @Test
    void anExceptionWhoseMessageThrowsEndsADrainWithItsOutcome() {
        long id = jobQueue.enqueue(JobRequest.of("orders", new Order(1)).maxAttempts(1));
        try (WorkerRuntime runtime = builder((order, job) -> {
            throw new Unprintable();
        }).errorDescriber(REDACTING).build()) {
            assertThat(runtime.drain("orders")).singleElement().satisfies(run -> {
                assertThat(run.id()).isEqualTo(id);
                assertThat(run.status()).isEqualTo(io.workrow.queue.JobStatus.DEAD);
            });
            assertThat(runtime.inFlightCount()).isZero();
        }
    }

    @Test
    void aFailureWithAttemptsLeftIsScheduledForItsRetry() {
        long id = jobQueue.enqueue(JobRequest.of("orders", new Order(1)).maxAttempts(3));
        WorkerRuntime runtime = builder((order, job) -> {
            throw new IllegalStateException();
        }).errorDescriber(REDACTING).build();
        try {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> "scheduled".equals(row(id).get("status")));
            await().atMost(Duration.ofSeconds(5)).until(() -> runtime.inFlightCount() == 0);
            assertThat(row(id).get("last_error")).isEqualTo("java.lang.IllegalStateException");
        } finally {
            runtime.stop();
        }
    }

    private WorkerRuntime.Builder builder(JobHandler<Order> handler) {
        RetryBackoff slow = new RetryBackoff(Duration.ofMinutes(1), 2.0, Duration.ofMinutes(10), 0.0);
        return WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(50))
                .handler("orders", Order.class, handler, QueueOptions.defaults().withBackoff(slow));
    }

    /**
     * Runs one job with a single attempt through a started runtime; returns its row once it has
     * left running and the runtime holds nothing in flight.
     */
    private Map<String, Object> runOneJob(WorkerRuntime.Builder builder) {
        long id = jobQueue.enqueue(JobRequest.of("orders", new Order(1)).maxAttempts(1));
        WorkerRuntime runtime = builder.build();
        try {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                Object status = row(id).get("status");
                return "completed".equals(status) || "dead".equals(status);
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> runtime.inFlightCount() == 0);
            return row(id);
        } finally {
            runtime.stop();
        }
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }

    private PayloadCodec codecThrowing(Throwable failure) {
        return new PayloadCodec() {
            @Override
            public String encode(Object payload) {
                return jackson.encode(payload);
            }

            @Override
            public Object decode(String json, Type type) {
                if (failure instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw (Error) failure;
            }
        };
    }
}

package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RetryTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JdbcJobQueue jobQueue;

    record Charge(int cents) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }

    private WorkerRuntime runtime(io.workrow.queue.JobHandler<Charge> handler) {
        RetryBackoff backoff = new RetryBackoff(Duration.ofMillis(200), 2.0, Duration.ofSeconds(10), 0.0);
        return WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(50))
                .handler("charge", Charge.class, handler, QueueOptions.defaults().withBackoff(backoff))
                .build();
    }

    @Test
    void handlerThatAlwaysThrowsIsRetriedWithGrowingGapsUntilDead() {
        long id = jobQueue.enqueue(JobRequest.of("charge", new Charge(100)).maxAttempts(4));
        List<Instant> dueTimes = new CopyOnWriteArrayList<>();
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        try (WorkerRuntime runtime = runtime((charge, job) -> {
            dueTimes.add(job.runAt());
            attempts.add(job.attempt());
            throw new IllegalStateException("card declined for " + charge.cents());
        })) {
            runtime.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> "dead".equals(row(id).get("status")));
        }

        Map<String, Object> dead = row(id);
        assertThat(dead.get("attempts")).isEqualTo(4);
        assertThat(dead.get("max_attempts")).isEqualTo(4);
        assertThat((String) dead.get("last_error")).isEqualTo("java.lang.IllegalStateException: card declined for 100");
        assertThat(attempts).containsExactly(1, 2, 3, 4);
        long[] gaps = new long[3];
        for (int i = 0; i < 3; i++) {
            gaps[i] = Duration.between(dueTimes.get(i), dueTimes.get(i + 1)).toMillis();
        }
        assertThat(gaps[0]).isGreaterThanOrEqualTo(200);
        assertThat(gaps[1]).isGreaterThanOrEqualTo(400).isGreaterThan(gaps[0]);
        assertThat(gaps[2]).isGreaterThanOrEqualTo(800).isGreaterThan(gaps[1]);
    }

    @Test
    void discardSendsTheJobToDeadAtOnce() {
        long id = jobQueue.enqueue(JobRequest.of("charge", new Charge(100)).maxAttempts(5));
        AtomicInteger runs = new AtomicInteger();
        try (WorkerRuntime runtime = runtime((charge, job) -> {
            runs.incrementAndGet();
            throw new DiscardJobException("order 9182 was deleted");
        })) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> "dead".equals(row(id).get("status")));
        }
        assertThat(runs).hasValue(1);
        assertThat((String) row(id).get("last_error")).endsWith("order 9182 was deleted");
    }

    @Test
    void unreadablePayloadIsDeadWithTheReasonAndOtherJobsStillRun() {
        long good = jobQueue.enqueue("charge", new Charge(1));
        long poison = jobQueue.enqueue("charge", new Charge(1));
        database.rows().setPayload(poison, "{\"cents\": \"not a number\"}");
        AtomicInteger runs = new AtomicInteger();
        try (WorkerRuntime runtime = runtime((charge, job) -> runs.incrementAndGet())) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> "dead".equals(row(poison).get("status"))
                    && "completed".equals(row(good).get("status")));
        }
        assertThat(runs).hasValue(1);
        assertThat((String) row(poison).get("last_error")).contains("Payload is not a valid")
                .contains("RetryTests$Charge");
        assertThat(row(poison).get("attempts")).isEqualTo(1);
    }
}

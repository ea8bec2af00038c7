package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PollerResilienceTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Task(int n) {
    }

    @Test
    void aPollerOutlivesExceptionsInItsLoopAndLosesNoClaimedJob() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        for (int i = 0; i < 50; i++) {
            jobQueue.enqueue("fragile", new Task(i));
        }
        AtomicInteger failures = new AtomicInteger();
        QueueMetrics brokenMeters = new QueueMetrics() {
            @Override
            public void claimed(String queue, int count) {
                if (failures.incrementAndGet() <= 3) {
                    throw new IllegalStateException("meter registry broken (test)");
                }
            }
        };
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(brokenMeters)
                .pollInterval(Duration.ofMillis(100))
                .handler("fragile", Task.class, (task, job) -> { }, QueueOptions.defaults().withConcurrency(2)
                        .withBatchSize(2))
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE queue = 'fragile' AND status = 'completed'", Integer.class) == 50);
            assertThat(failures.get()).isGreaterThan(3);
            assertThat(runtime.deadPollers()).isEmpty();
            assertThat(runtime.isHealthy()).isTrue();
        } finally {
            runtime.stop();
        }
    }

    @Test
    void aMeterThatThrowsWhileTheRuntimeStopsCutsNoShutdownShort() throws Exception {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        long id = jobQueue.enqueue("stopping", new Task(1));
        CountDownLatch running = new CountDownLatch(1);
        QueueMetrics brokenOnStop = new QueueMetrics() {
            @Override
            public void handlers(String queue, int slots) {
                if (slots == 0) {
                    throw new IllegalStateException("meter registry closed first (test)");
                }
            }
        };
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(brokenOnStop)
                .shutdownTimeout(Duration.ofSeconds(5))
                .handler("stopping", Task.class, (task, job) -> {
                    running.countDown();
                    Thread.sleep(300);
                }, QueueOptions.defaults())
                .build();
        runtime.start();
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        runtime.stop();
        assertThat(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id))
                .as("the running handler finished and its completion was written").isEqualTo("completed");
    }
}

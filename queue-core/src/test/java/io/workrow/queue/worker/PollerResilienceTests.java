package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
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
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 50);
            assertThat(failures.get()).isGreaterThan(3);
            assertThat(runtime.deadPollers()).isEmpty();
            assertThat(runtime.isHealthy()).isTrue();
        } finally {
            runtime.stop();
        }
    }
}

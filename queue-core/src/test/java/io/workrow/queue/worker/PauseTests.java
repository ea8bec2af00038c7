package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PauseTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Ping(int n) {
    }

    @Test
    void pauseStopsClaimsOnEveryRuntimeSharingTheDatabaseAndResumeRestartsThem() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        JdbcQueueAdmin admin = new JdbcQueueAdmin(database.store());
        Set<Long> handled = ConcurrentHashMap.newKeySet();
        List<WorkerRuntime> runtimes = List.of(runtime(handled), runtime(handled));
        runtimes.forEach(WorkerRuntime::start);
        try {
            long before = jobQueue.enqueue("ping", new Ping(0));
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.contains(before));

            admin.pause("ping", "incident 42");
            assertThat(admin.pausedQueues()).containsExactly("ping");
            List<Long> held = jobQueue.enqueueAll(java.util.stream.IntStream.range(1, 21)
                    .mapToObj(i -> io.workrow.queue.JobRequest.of("ping", new Ping(i))).toList());
            // Both runtimes are woken by the inserts and poll every 100 ms; give them many chances.
            await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3))
                    .until(() -> held.stream().noneMatch(handled::contains));
            assertThat(database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'pending' AND queue = 'ping'", Integer.class))
                    .isEqualTo(20);
            assertThat(admin.stats()).singleElement().satisfies(stats -> assertThat(stats.paused()).isTrue());

            assertThat(admin.resume("ping")).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.containsAll(held));
            assertThat(admin.resume("ping")).as("already running").isFalse();
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }
    }

    private WorkerRuntime runtime(Set<Long> handled) {
        return WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(100))
                .handler("ping", Ping.class, (ping, job) -> handled.add(job.id()), QueueOptions.defaults())
                .build();
    }
}

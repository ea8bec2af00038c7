package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.MaintenanceScheduler;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A worker loses its database mid-job, as in a crash: every job still completes, none is lost. */
class CrashRecoveryTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Work(int n) {
    }

    @Test
    void jobsHeldByAWorkerThatDiesAreRecoveredAndCompletedByAnother() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        List<Long> ids = jobQueue.enqueueAll(IntStream.range(0, 200)
                .mapToObj(i -> JobRequest.of("work", new Work(i))).toList());
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        QueueOptions options = QueueOptions.defaults().withConcurrency(8).withLease(Duration.ofSeconds(1));

        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.server().user());
        config.setPassword(database.server().password());
        config.setMaximumPoolSize(12);
        config.setConnectionTimeout(250);
        HikariDataSource doomedPool = new HikariDataSource(config);
        WorkerRuntime doomed = WorkerRuntime.builder(doomedPool)
                .workerId("doomed")
                .shutdownTimeout(Duration.ZERO)
                .handler("work", Work.class, (work, job) -> {
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    Thread.sleep(500);
                }, options)
                .build();
        doomed.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_job WHERE status = 'running' AND claimed_by = 'doomed'", Integer.class) == 8);
        // The crash: the worker's connections are gone; whatever it finishes can no longer be recorded.
        doomedPool.close();
        List<Long> held = database.jdbc().queryForList(
                "SELECT id FROM workrow_job WHERE status = 'running' AND claimed_by = 'doomed'", Long.class);

        MaintenanceScheduler sweeper = new MaintenanceScheduler()
                .every(Duration.ofMillis(200), new StaleLeaseSweeper(database.store(), 100));
        WorkerRuntime survivor = WorkerRuntime.builder(database.dataSource())
                .workerId("survivor")
                .pollInterval(Duration.ofMillis(100))
                .handler("work", Work.class, (work, job) ->
                        runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet(), options)
                .build();
        sweeper.start();
        survivor.start();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 200);
        } finally {
            survivor.stop();
            sweeper.close();
            doomed.stop();
        }

        assertThat(held).hasSize(8);
        assertThat(runs.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        for (long id : ids) {
            Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
            assertThat(row.get("status")).isEqualTo("completed");
            assertThat(row.get("claimed_by")).isEqualTo("survivor");
            // At least once: the jobs the dead worker held ran again; every other job ran once.
            int expectedRuns = held.contains(id) ? 2 : 1;
            assertThat(runs.get(id)).as("runs of job %d", id).hasValue(expectedRuns);
            assertThat(row.get("attempts")).isEqualTo(expectedRuns);
        }
    }
}

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
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.PgBouncer;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Workrow behind a real PgBouncer in transaction pooling mode, where each statement may run on a
 * different server connection: poll-only wake-ups ({@code listen-notify=false}) and a JDBC URL
 * without server-side prepared statements ({@code prepareThreshold=0}; PgBouncer before 1.21
 * cannot carry them).
 */
class PgBouncerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static PgBouncer bouncer;
    private static HikariDataSource throughBouncer;

    record Work(int n, boolean failFirst) {
    }

    @BeforeAll
    static void startPgBouncer() throws Exception {
        Assumptions.assumeTrue(PgBouncer.available() || System.getenv("CI") != null,
                "pgbouncer is not installed (.ci/run installs it)");
        bouncer = PgBouncer.transactionPooling(database.jdbcUrl(), database.server().user());
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bouncer.route(database.jdbcUrl()) + "?prepareThreshold=0");
        config.setUsername(database.server().user());
        config.setPassword(database.server().password());
        config.setMaximumPoolSize(20);
        throughBouncer = new HikariDataSource(config);
    }

    @AfterAll
    static void stopPgBouncer() throws Exception {
        if (throughBouncer != null) {
            throughBouncer.close();
        }
        if (bouncer != null) {
            bouncer.close();
        }
    }

    @Test
    void jobsRunOnceRetryAndSaveStepsThroughTransactionPooling() {
        JobStore store = JobStore.of(throughBouncer, database.schema());
        JdbcJobQueue jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            requests.add(JobRequest.of("bounced", new Work(i, i % 50 == 0)));
        }
        List<Long> ids = jobQueue.enqueueAll(requests);
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        WorkerRuntime runtime = WorkerRuntime.builder(throughBouncer)
                .store(store)
                .listenNotify(false)
                .pollInterval(Duration.ofMillis(100))
                .handler("bounced", Work.class, (work, job) -> {
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    job.saveStep("seen");
                    if (work.failFirst() && job.attempt() == 1) {
                        throw new IllegalStateException("first attempt fails");
                    }
                }, QueueOptions.defaults().withConcurrency(8).withLease(Duration.ofSeconds(2))
                        .withBackoff(new RetryBackoff(Duration.ofMillis(200), 1.0, Duration.ofMillis(200), 0.0)))
                .build();
        try (MaintenanceScheduler maintenance = new MaintenanceScheduler()
                .every(Duration.ofMillis(500), new StaleLeaseSweeper(store, 100))) {
            maintenance.start();
            runtime.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == ids.size());
        } finally {
            runtime.stop();
        }
        assertThat(runs).hasSize(ids.size());
        assertThat(runs.values().stream().mapToInt(AtomicInteger::get).sum()).as("6 jobs ran twice, by design")
                .isEqualTo(ids.size() + 6);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE step = 'seen'",
                Integer.class)).isEqualTo(ids.size());
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE last_error LIKE"
                + " 'lease expired%'", Integer.class)).as("renewals kept every lease").isZero();
    }
}

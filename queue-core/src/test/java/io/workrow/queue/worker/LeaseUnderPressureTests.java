package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.MaintenanceScheduler;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.TcpProxy;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Leases under the pressures users create: an operator's open transaction holding running rows,
 * a handler's own write waiting on a lock, a job claimed again here while its old run winds down,
 * a handler that ignores the interrupt after its timeout. A lease lapses only when its holder
 * stops renewing it.
 */
class LeaseUnderPressureTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final Duration LEASE = Duration.ofMillis(1500);

    record Work(long millis) {
    }

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_lease_holder");
    }

    private MaintenanceScheduler sweeper() {
        return new MaintenanceScheduler().every(Duration.ofMillis(100), new StaleLeaseSweeper(database.store(), 100));
    }

    @Test
    void anOperatorsTransactionHoldingRunningRowsForTwiceTheLeaseRunsEveryJobOnce() throws Exception {
        List<Long> ids = List.of(jobQueue.enqueue("long", new Work(5_000)), jobQueue.enqueue("long", new Work(5_000)),
                jobQueue.enqueue("long", new Work(5_000)), jobQueue.enqueue("long", new Work(5_000)));
        CountDownLatch allRunning = new CountDownLatch(4);
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("long", Work.class, (work, job) -> {
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    allRunning.countDown();
                    Thread.sleep(work.millis());
                }, QueueOptions.defaults().withConcurrency(4).withLease(LEASE))
                .build();
        try (MaintenanceScheduler sweeper = sweeper()) {
            sweeper.start();
            runtime.start();
            assertThat(allRunning.await(10, TimeUnit.SECONDS)).isTrue();
            // psql: BEGIN; SELECT ... FOR UPDATE of the queue's running rows; twice the lease before COMMIT.
            try (Connection operator = database.dataSource().getConnection()) {
                operator.setAutoCommit(false);
                try (Statement statement = operator.createStatement()) {
                    statement.executeQuery(database.rows().lockRunningJobsOf("long")).close();
                }
                Thread.sleep(LEASE.multipliedBy(2).toMillis());
                assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE queue = 'long'"
                        + " AND status = 'running' AND lease_expires_at < now()", Integer.class))
                        .as("the rows' own leases ran out under the lock").isEqualTo(4);
                operator.commit();
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> completed("long") == 4);
        } finally {
            runtime.stop();
        }
        for (long id : ids) {
            assertThat(runs.get(id)).as("runs of job %d", id).hasValue(1);
            assertThat(row(id)).containsEntry("attempts", 1).containsEntry("lease_expiries", 0);
        }
    }

    @Test
    void aHandlersStepWriteWaitingOnALockHoldsUpNoRenewal() throws Exception {
        long stepping = jobQueue.enqueue("steps", new Work(0));
        long slow = jobQueue.enqueue("steps", new Work(6_000));
        CountDownLatch bothRunning = new CountDownLatch(2);
        CountDownLatch locked = new CountDownLatch(1);
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("steps", Work.class, (work, job) -> {
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    bothRunning.countDown();
                    if (work.millis() == 0) {
                        locked.await();
                        job.saveStep("charged"); // waits on the operator's lock, on the handlers' write thread
                    } else {
                        Thread.sleep(work.millis());
                    }
                }, QueueOptions.defaults().withConcurrency(2).withLease(LEASE))
                .build();
        try (MaintenanceScheduler sweeper = sweeper()) {
            sweeper.start();
            runtime.start();
            assertThat(bothRunning.await(10, TimeUnit.SECONDS)).isTrue();
            try (Connection operator = database.dataSource().getConnection()) {
                operator.setAutoCommit(false);
                try (Statement statement = operator.createStatement()) {
                    statement.executeQuery(database.rows().lockRunningJob(stepping)).close();
                }
                locked.countDown();
                Thread.sleep(LEASE.multipliedBy(2).toMillis());
                operator.commit();
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> completed("steps") == 2);
        } finally {
            runtime.stop();
        }
        assertThat(runs.get(slow)).hasValue(1);
        assertThat(runs.get(stepping)).hasValue(1);
        assertThat(row(slow)).containsEntry("lease_expiries", 0);
        assertThat(row(stepping)).containsEntry("step", "charged").containsEntry("lease_expiries", 0);
    }

    @Test
    void anOldRunEndingAfterItsJobWasClaimedAgainHereLeavesTheNewRunsLeaseRenewed() throws Exception {
        long id = jobQueue.enqueue("again", new Work(0));
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch secondRunning = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean oldRunToldLost = new java.util.concurrent.atomic.AtomicBoolean();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(50))
                .handler("again", Work.class, (work, job) -> {
                    runs.computeIfAbsent(job.id(), key -> new AtomicInteger()).incrementAndGet();
                    if (job.attempt() == 1) {
                        firstRunning.countDown();
                        awaitIgnoringInterrupts(releaseFirst);
                        oldRunToldLost.set(job.isLeaseLost());
                    } else {
                        secondRunning.countDown();
                        Thread.sleep(LEASE.multipliedBy(3).toMillis());
                    }
                }, QueueOptions.defaults().withConcurrency(2).withLease(LEASE))
                .build();
        runtime.start();
        try {
            assertThat(firstRunning.await(10, TimeUnit.SECONDS)).isTrue();
            // What the sweeper does to an expired lease: pending again, no owner, no token.
            database.rows().requeueAsSwept(id);
            assertThat(secondRunning.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(LEASE.toMillis()); // renewals of both runs, one id
            releaseFirst.countDown(); // the old run ends while the new one runs on
            try (MaintenanceScheduler sweeper = sweeper()) {
                sweeper.start();
                await().atMost(Duration.ofSeconds(20)).until(() -> completed("again") == 1);
            }
        } finally {
            releaseFirst.countDown();
            runtime.stop();
        }
        assertThat(runs.get(id)).hasValue(2);
        assertThat(row(id)).containsEntry("attempts", 2).containsEntry("lease_expiries", 0);
        assertThat(oldRunToldLost).as("the old run learnt its lease was gone, though its job id is renewed").isTrue();
    }

    @Test
    void aHandlerIgnoringTheInterruptPastItsTimeoutIsLetGoAndItsJobRecovered() throws Exception {
        long id = jobQueue.enqueue(JobRequest.of("stubborn", new Work(0)).maxAttempts(1));
        AtomicInteger abandoned = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .metrics(new QueueMetrics() {
                    @Override
                    public void abandoned(String queue) {
                        abandoned.incrementAndGet();
                    }
                })
                .handler("stubborn", Work.class, (work, job) -> {
                    awaitIgnoringInterrupts(release);
                    returned.set(true);
                },
                        QueueOptions.defaults().withLease(LEASE).withTimeout(Duration.ofMillis(500)))
                .build();
        try (MaintenanceScheduler sweeper = sweeper()) {
            sweeper.start();
            runtime.start();
            // Timeout 0.5 s, let go one lease later, recovered once the lease runs out: about 3.5 s.
            await().atMost(Duration.ofSeconds(15)).until(() -> "dead".equals(row(id).get("status")));
            assertThat(abandoned).hasValue(1);
            assertThat((String) row(id).get("last_error")).startsWith("lease expired while held by ");
            assertThat(returned).as("the handler still runs").isFalse();
            assertThat(runtime.inFlightCount()).as("its position ended when it was let go").isZero();
        } finally {
            release.countDown();
            runtime.stop();
        }
    }

    @Test
    void aRenewalConnectionThatStopsAnsweringCostsOneRenewalNotTheLease() throws Exception {
        Duration lease = Duration.ofSeconds(9); // renewals every 3 s, each given up after 3 s
        long id = jobQueue.enqueue("frozen", new Work(lease.toMillis() * 3 / 2));
        CountDownLatch running = new CountDownLatch(1);
        try (TcpProxy proxy = TcpProxy.inFrontOf(database.jdbcUrl());
                HikariDataSource throughProxy = throughProxy(proxy);
                MaintenanceScheduler sweeper = sweeper()) {
            // A statement timeout of 1 s: without its own, shorter network timeout the renewal's
            // connection would hang 11 s (the statement timeout plus 10 s), past the lease.
            WorkerRuntime runtime = WorkerRuntime.builder(throughProxy)
                    .store(JobStore.of(throughProxy, database.schema(), Duration.ofSeconds(1)))
                    .handler("frozen", Work.class, (work, job) -> {
                        runs.computeIfAbsent(job.id(), key -> new AtomicInteger()).incrementAndGet();
                        running.countDown();
                        Thread.sleep(work.millis());
                    }, QueueOptions.defaults().withLease(lease))
                    .build();
            sweeper.start();
            runtime.start();
            try {
                assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
                proxy.freezeAll(); // every open connection stops answering, without an error
                await().atMost(Duration.ofSeconds(60)).until(() -> completed("frozen") == 1);
            } finally {
                runtime.stop();
            }
        }
        assertThat(runs.get(id)).hasValue(1);
        assertThat(row(id)).containsEntry("attempts", 1).containsEntry("lease_expiries", 0);
    }

    private static HikariDataSource throughProxy(TcpProxy proxy) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(proxy.route(database.jdbcUrl()));
        config.setUsername(database.server().user());
        config.setPassword(database.server().password());
        config.setConnectionTimeout(2_000);
        config.setValidationTimeout(250);
        config.setMaximumPoolSize(12);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException ignored) {
                // a handler that will not stop
            }
        }
    }

    private int completed(String queue) {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE queue = ? AND status = 'completed'",
                Integer.class, queue);
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }
}

package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The one result path: locked rows, backpressure and database errors. */
class ResultWriterTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Task(int n) {
    }

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @Test
    void resultsThatCannotBeWrittenBoundWhatIsClaimedUntilTheyCanThenAllComplete() throws Exception {
        for (int i = 0; i < 10; i++) {
            jobQueue.enqueue("locked", new Task(i));
        }
        java.util.concurrent.BlockingQueue<Long> started = new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.Set<Long> locked = java.util.concurrent.ConcurrentHashMap.newKeySet();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(50))
                .completionBatchSize(2)
                .handler("locked", Task.class, (task, job) -> {
                    started.add(job.id());
                    while (!locked.contains(job.id())) {
                        Thread.sleep(10);
                    }
                    // No line: the writer's room is then a batch plus one result per slot. (With a
                    // prefetch it grows by the most the line may hold, adaptive or fixed.)
                }, QueueOptions.defaults().withConcurrency(2).withLease(Duration.ofSeconds(3)).withPrefetch(0))
                .build();
        try (Connection operator = database.dataSource().getConnection()) {
            operator.setAutoCommit(false);
            runtime.start();
            // Every job's row is locked by an operator's open transaction as soon as its handler
            // runs, as a forgotten psql session holding the rows would: no outcome can be written.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < until) {
                Long id = started.poll(100, TimeUnit.MILLISECONDS);
                if (id != null) {
                    operator.createStatement().execute(database.rows().lockRunningJob(id));
                    locked.add(id);
                }
            }
            // The writer has room for 4 results (a batch of 2 plus one per slot); the next two
            // handlers wait to hand theirs over, their slots stay taken, and claims stop there.
            assertThat(runtime.inFlightCount()).isEqualTo(6);
            assertThat(count("running")).isEqualTo(6);
            assertThat(count("pending")).isEqualTo(4);
            assertThat(database.jdbc().queryForList("SELECT DISTINCT claimed_by FROM workrow_job WHERE status ="
                    + " 'running'", String.class)).containsExactly(runtime.workerId());

            operator.rollback();
            // Once the locks go, everything completes, each job once.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (count("completed") < 10 && System.nanoTime() < deadline) {
                Long id = started.poll(100, TimeUnit.MILLISECONDS);
                if (id != null) {
                    locked.add(id);
                }
            }
            assertThat(count("completed")).isEqualTo(10);
            assertThat(database.jdbc().queryForObject("SELECT max(attempts) FROM workrow_job", Integer.class))
                    .isEqualTo(1);
        } finally {
            runtime.stop();
        }
    }

    @Test
    void oneLockedRowStallsNoOtherCompletion() throws Exception {
        long lockedId = jobQueue.enqueue("busy", new Task(0));
        for (int i = 1; i < 20; i++) {
            jobQueue.enqueue("busy", new Task(i));
        }
        CountDownLatch lockedRunning = new CountDownLatch(1);
        CountDownLatch lockTaken = new CountDownLatch(1);
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(50))
                .handler("busy", Task.class, (task, job) -> {
                    if (job.id() == lockedId) {
                        lockedRunning.countDown();
                        lockTaken.await();
                    }
                }, QueueOptions.defaults().withConcurrency(4))
                .build();
        try (Connection operator = database.dataSource().getConnection()) {
            runtime.start();
            assertThat(lockedRunning.await(10, TimeUnit.SECONDS)).isTrue();
            operator.setAutoCommit(false);
            operator.createStatement().execute(database.rows().lockRunningJob(lockedId));
            // The jobs whose ends the lock holds up: the open jobs of the locked job's claim (they
            // share the claim row).
            int stalled = database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'running'"
                    + " AND lease_token = (SELECT lease_token FROM workrow_job WHERE id = ?)", Integer.class, lockedId);
            lockTaken.countDown();

            await().atMost(Duration.ofSeconds(10)).until(() -> count("completed") == 20 - stalled);
            assertThat(count("running")).isEqualTo(stalled);
            operator.rollback();
            await().atMost(Duration.ofSeconds(10)).until(() -> count("completed") == 20);
        } finally {
            runtime.stop();
        }
    }

    @Test
    void aFailureIsRecordedWithItsRealErrorOnceTheDatabaseComesBack() throws Exception {
        long id = jobQueue.enqueue("blip", new Task(1));
        FlakyDataSource flaky = new FlakyDataSource(database.dataSource());
        CountDownLatch handlerRunning = new CountDownLatch(1);
        CountDownLatch databaseDown = new CountDownLatch(1);
        WorkerRuntime runtime = WorkerRuntime.builder(flaky)
                .listenNotify(false)
                .handler("blip", Task.class, (task, job) -> {
                    handlerRunning.countDown();
                    databaseDown.await();
                    throw new IllegalStateException("payment gateway said no");
                }, QueueOptions.defaults().withBackoff(new RetryBackoff(Duration.ofHours(1), 2.0, Duration.ofHours(1), 0)))
                .build();
        runtime.start();
        try {
            assertThat(handlerRunning.await(10, TimeUnit.SECONDS)).isTrue();
            flaky.down.set(true);
            databaseDown.countDown();
            Thread.sleep(1_000); // the writer tries, fails, backs off
            assertThat(runtime.inFlightCount()).isEqualTo(1);
            flaky.down.set(false);

            await().atMost(Duration.ofSeconds(15)).until(() -> runtime.inFlightCount() == 0);
            assertThat(database.jdbc().queryForMap("SELECT status, last_error FROM workrow_job WHERE id = ?", id))
                    .containsEntry("status", "scheduled") // an hour's backoff
                    .containsEntry("last_error", "java.lang.IllegalStateException: payment gateway said no");
        } finally {
            runtime.stop();
        }
    }

    private int count(String status) {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE status = ?", Integer.class,
                status);
    }

    /** A DataSource whose connections can be refused for a while, as during a failover. */
    static final class FlakyDataSource implements DataSource {

        final AtomicBoolean down = new AtomicBoolean();
        private final DataSource target;

        FlakyDataSource(DataSource target) {
            this.target = target;
        }

        /**
         * While down, no connection is given out, and the ones already out (the result writer
         * keeps one) fail every call but {@code close}, as connections to an unreachable server do.
         */
        @Override
        public Connection getConnection() throws SQLException {
            if (down.get()) {
                throw new SQLTransientConnectionException("database unreachable (test)");
            }
            Connection connection = target.getConnection();
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, arguments) -> {
                        if (down.get() && !method.getName().equals("close")) {
                            throw new SQLTransientConnectionException("database unreachable (test)", "08006");
                        }
                        try {
                            return method.invoke(connection, arguments);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return target.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            target.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            target.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return target.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return target.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}

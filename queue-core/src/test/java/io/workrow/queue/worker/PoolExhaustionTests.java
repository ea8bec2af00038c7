package io.workrow.queue.worker;

import io.workrow.queue.worker.connection.ReservedConnection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.MaintenanceScheduler;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

/**
 * The application takes every connection its pool has while handlers run longer than their lease:
 * the lease keeper and the result writer keep connections of their own, so no renewal and no
 * outcome waits for the pool, nothing is swept, and every job runs once.
 */
class PoolExhaustionTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Work(long millis) {
    }

    private HikariDataSource pool;

    @BeforeEach
    void smallPool() {
        database.deleteAllJobs();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.server().user());
        config.setPassword(database.server().password());
        config.setMaximumPoolSize(6);
        config.setConnectionTimeout(500);
        config.setPoolName("exhausted");
        pool = new HikariDataSource(config);
    }

    @AfterEach
    void closePool() {
        pool.close();
    }

    @Test
    void renewalsAndOutcomesGoOnWhileTheApplicationHoldsEveryOtherConnection() throws Exception {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        List<Long> ids = List.of(jobQueue.enqueue("slow", new Work(5_000)), jobQueue.enqueue("slow", new Work(5_000)));
        AtomicInteger runs = new AtomicInteger();
        WorkerRuntime runtime = WorkerRuntime.builder(pool)
                .handler("slow", Work.class, (work, job) -> {
                    runs.incrementAndGet();
                    Thread.sleep(work.millis());
                }, QueueOptions.defaults().withConcurrency(2).withLease(Duration.ofSeconds(2)))
                .build();
        List<Connection> taken = new ArrayList<>();
        Timestamp heldUntil;
        // Another node's sweeper, on a pool of its own: it takes any lease this runtime lets expire.
        try (MaintenanceScheduler sweeper = new MaintenanceScheduler()
                .every(Duration.ofMillis(200), new StaleLeaseSweeper(database.store(), 100))) {
            sweeper.start();
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 2);
            takeEveryConnection(taken);
            assertThat(taken).as("the application holds what the runtime does not").isNotEmpty();
            assertThatThrownBy(() -> new JdbcTemplate(pool).queryForObject("SELECT 1", Integer.class))
                    .as("the pool is exhausted").isInstanceOf(DataAccessException.class);
            // Two and a half leases later the handlers end, and their outcomes are written while the pool is held.
            await().atMost(Duration.ofSeconds(20)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 2);
            heldUntil = new Timestamp(System.currentTimeMillis());
        } finally {
            for (Connection connection : taken) {
                connection.close();
            }
            runtime.stop();
        }
        assertThat(runs).as("no job ran twice").hasValue(2);
        for (long id : ids) {
            assertThat(database.jdbc().queryForMap(
                    "SELECT attempts, lease_expiries, finished_at < ? AS before_release FROM workrow_job WHERE id = ?",
                    heldUntil, id)).containsEntry("attempts", 1).containsEntry("lease_expiries", 0)
                    .containsEntry("before_release", true);
        }
    }

    @Test
    void aReservedConnectionWhoseBackendIsTerminatedIsReplacedAtTheNextStatement() {
        assertReplacedAfterTermination(pool);
    }

    @Test
    void aBrokenConnectionIsReplacedEvenBehindAProxyThatStillCallsItOpen() {
        // TransactionAwareDataSourceProxy answers isClosed() for its own handle only, as pools
        // other than Hikari may: the failed statement has the connection checked instead.
        assertReplacedAfterTermination(new TransactionAwareDataSourceProxy(pool));
    }

    @Test
    void aReleaseWhileAStatementRunsGivesTheConnectionBackWhenTheStatementEnds() throws SQLException {
        ReservedConnection reserved = new ReservedConnection(pool, "test", 20_000);
        Connection inUse = reserved.getConnection();
        reserved.release();
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).as("still in use").isEqualTo(1);
        inUse.close();
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).as("given back").isZero();
    }

    @Test
    void aKeptConnectionAutocommitsWithANetworkTimeoutAndGoesBackAsItWasLent() throws SQLException {
        // One connection that keeps whatever is set on it (Hikari would reset it on return itself).
        SingleConnectionDataSource single = new SingleConnectionDataSource(database.jdbcUrl(),
                database.server().user(), database.server().password(), true);
        single.setAutoCommit(false);
        try {
            ReservedConnection reserved = new ReservedConnection(single, "test", 12_345);
            try (Connection kept = reserved.getConnection()) {
                assertThat(kept.getAutoCommit()).isTrue();
                assertThat(kept.getNetworkTimeout()).isEqualTo(12_345);
            }
            reserved.release();
            Connection lent = single.getConnection();
            assertThat(lent.getAutoCommit()).as("as the pool lent it").isFalse();
            assertThat(lent.getNetworkTimeout()).isZero();
        } finally {
            single.destroy();
        }
    }

    @Test
    void aStatementsOwnErrorKeepsTheConnectionAfterOneCheck() {
        AtomicInteger validations = new AtomicInteger();
        DataSource counting = new DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, arguments) -> {
                            if (method.getName().equals("isValid")) {
                                validations.incrementAndGet();
                            }
                            try {
                                return method.invoke(connection, arguments);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
        ReservedConnection reserved = new ReservedConnection(counting, "test", 20_000);
        JdbcTemplate jdbc = new JdbcTemplate(reserved);
        int backend = jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
        assertThatThrownBy(() -> jdbc.queryForObject("SELECT 1 / 0", Integer.class))
                .isInstanceOf(DataAccessException.class);
        for (int i = 0; i < 3; i++) {
            assertThat(jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class)).as("kept").isEqualTo(backend);
        }
        assertThat(validations).as("checked once after the error, not before every statement since").hasValue(1);
        reserved.release();
    }

    private void assertReplacedAfterTermination(DataSource dataSource) {
        ReservedConnection reserved = new ReservedConnection(dataSource, "test", 20_000);
        JdbcTemplate jdbc = new JdbcTemplate(reserved);
        int first = jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
        assertThat(jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class)).as("kept").isEqualTo(first);
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isEqualTo(1);

        database.jdbc().queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, first);
        assertThatThrownBy(() -> jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class))
                .isInstanceOf(DataAccessException.class);
        int second = jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
        assertThat(second).isNotEqualTo(first);
        assertThat(jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class)).isEqualTo(second);

        reserved.release();
        await().atMost(Duration.ofSeconds(5)).until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
    }

    /** Borrows until the pool's connection timeout says there is nothing left. */
    private void takeEveryConnection(List<Connection> taken) {
        while (true) {
            try {
                taken.add(pool.getConnection());
            } catch (SQLException exhausted) {
                return;
            }
        }
    }
}

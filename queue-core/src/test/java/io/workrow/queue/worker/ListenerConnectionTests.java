package io.workrow.queue.worker;

import io.workrow.queue.worker.notify.InsertListener;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.testing.TcpProxy;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The wake-up connection under network faults: a silent drop, and outages long and short. */
class ListenerConnectionTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private TcpProxy proxy;
    private HikariDataSource throughProxy;
    private InsertListener listener;
    private Thread listenerThread;
    private final AtomicInteger connects = new AtomicInteger();

    @BeforeEach
    void setUp() throws Exception {
        proxy = TcpProxy.inFrontOf(database.jdbcUrl());
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(proxy.route(database.jdbcUrl()));
        config.setUsername(database.server().user());
        config.setPassword(database.server().password());
        config.setConnectionTimeout(1_000);
        // Frozen idle connections in the pool are found by Hikari's own validation, one at a time.
        config.setValidationTimeout(500);
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(0);
        config.setInitializationFailTimeout(-1);
        throughProxy = new HikariDataSource(config);
        listener = new InsertListener(throughProxy, database.store().notifyChannel(), payload -> { },
                connects::incrementAndGet);
        listenerThread = new Thread(listener, "listener-under-test");
        listenerThread.start();
        await().atMost(Duration.ofSeconds(10)).until(listener::isConnected);
    }

    @AfterEach
    void tearDown() throws Exception {
        listener.stop();
        listenerThread.join(20_000);
        throughProxy.close();
        proxy.close();
    }

    @Test
    void aConnectionThatSilentlyStopsAnsweringIsFoundByTheProbeAndReplaced() {
        proxy.freezeAll(); // no reset, no error: the open connection just stops answering

        Duration budget = Duration.ofMillis(InsertListener.PROBE_INTERVAL_MILLIS + InsertListener.NETWORK_TIMEOUT_MILLIS
                + 15_000);
        await().atMost(budget).until(() -> connects.get() >= 2);
        assertThat(listener.isConnected()).isTrue();
    }

    @Test
    void theReconnectBackoffStartsOverOnceAConnectionHeld() {
        proxy.refuseNewConnections(true);
        proxy.cutAll();
        // A long outage: the wait between attempts grows (100, 200, 400, 800, 1600 ms ...).
        await().atMost(Duration.ofSeconds(30)).until(() -> listener.reconnectBackoffMillis() >= 1_600);
        proxy.refuseNewConnections(false);
        await().atMost(Duration.ofSeconds(10)).until(listener::isConnected);
        assertThat(listener.reconnectBackoffMillis()).isEqualTo(100);

        // The next short outage is bridged in about 100 ms, not the long outage's seconds.
        int before = connects.get();
        proxy.cutAll();
        await().atMost(Duration.ofSeconds(2)).until(() -> connects.get() > before);
    }
}

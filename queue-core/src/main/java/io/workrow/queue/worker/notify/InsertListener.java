package io.workrow.queue.worker.notify;

import io.workrow.queue.worker.connection.PoolConnections;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime's one LISTEN connection, on its schema's channel: turns insert notifications into
 * wake-ups for the queue's poller, and cancellation notices into interrupts. A notification is
 * only a hint; it is lost while this connection is down, so after every (re)connect all pollers
 * are woken to look for themselves, and polling stays as the safety net. Reconnects with
 * exponential backoff, which starts over once a connection has held. A connection whose peer
 * vanished without a word (a dropped TCP path) never fails a read of notifications, so the
 * listener probes it with a query every {@link #PROBE_INTERVAL_MILLIS} under a network timeout.
 */
public final class InsertListener implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(InsertListener.class);

    private static final int RECEIVE_TIMEOUT_MILLIS = 500;
    private static final long FIRST_RECONNECT_BACKOFF_MILLIS = 100;
    private static final long MAX_RECONNECT_BACKOFF_MILLIS = 30_000;
    /** How often a quiet connection is checked with a query. */
    public static final long PROBE_INTERVAL_MILLIS = 5_000;
    /** How long a probe may wait for an answer before the connection counts as dead. */
    public static final int NETWORK_TIMEOUT_MILLIS = 5_000;

    private final DataSource dataSource;
    private final String channel;
    private final Consumer<String> onInsert;
    private final Runnable onConnect;
    private final Wakeup stopSignal = new Wakeup();
    private volatile boolean running = true;
    private volatile boolean connected;
    /** When the connection was last lost (or first sought), in nanoTime; meaningful while not connected. */
    private volatile long disconnectedSince = System.nanoTime();

    /**
     * @param channel the schema's notification channel
     * @param onInsert called with the payload of each notification: a queue name or a cancellation
     * @param onConnect called after each successful (re)connect
     */
    public InsertListener(DataSource dataSource, String channel, Consumer<String> onInsert, Runnable onConnect) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.onInsert = onInsert;
        this.onConnect = onConnect;
    }

    public boolean isConnected() {
        return connected;
    }

    /** How long the listener has been without a connection; zero while connected. */
    public java.time.Duration disconnectedFor() {
        return connected ? java.time.Duration.ZERO : java.time.Duration.ofNanos(System.nanoTime() - disconnectedSince);
    }

    public void stop() {
        running = false;
        stopSignal.signal();
    }

    /** The wait before the next reconnect; package-private so tests can see it start over. */
    public long reconnectBackoffMillis() {
        return backoff;
    }

    private volatile long backoff = FIRST_RECONNECT_BACKOFF_MILLIS;
    private volatile boolean everConnected;

    @Override
    public void run() {
        while (running) {
            Connection connection = null;
            SQLException failure = null;
            try {
                connection = dataSource.getConnection();
                connection.setAutoCommit(true);
                connection.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
                listen(connection);
                unlisten(connection);
            } catch (SQLException e) {
                failure = e;
            } catch (RuntimeException e) {
                failure = new SQLException(e.toString(), e);
            } finally {
                if (failure != null) {
                    // Probe before closing: closing first would return the broken connection to the pool.
                    PoolConnections.revealBroken(connection);
                }
                if (connected) {
                    disconnectedSince = System.nanoTime();
                }
                close(connection);
            }
            boolean wasConnected = connected;
            connected = false;
            if (failure != null && running) {
                log.warn("Insert listener {}, retrying in {} ms (polling continues): {}",
                        wasConnected ? "lost its connection" : "could not connect", backoff, failure.getMessage());
                stopSignal.sleep(backoff);
                backoff = Math.min(backoff * 2, MAX_RECONNECT_BACKOFF_MILLIS);
            }
        }
    }

    /** Listens until stopped or the connection fails. */
    private void listen(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("LISTEN \"" + channel + "\"");
        }
        PGConnection notifications = connection.unwrap(PGConnection.class);
        connected = true;
        // A connection that holds is a good connection: the next outage starts from a short wait.
        backoff = FIRST_RECONNECT_BACKOFF_MILLIS;
        if (everConnected) {
            log.info("Insert listener reconnected; waking every queue to catch up");
        }
        everConnected = true;
        onConnect.run();
        long nextProbe = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROBE_INTERVAL_MILLIS);
        while (running) {
            PGNotification[] received = notifications.getNotifications(RECEIVE_TIMEOUT_MILLIS);
            if (received != null && received.length > 0) {
                for (PGNotification notification : received) {
                    onInsert.accept(notification.getParameter());
                }
            }
            if (System.nanoTime() - nextProbe > 0) {
                probe(connection);
                nextProbe = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROBE_INTERVAL_MILLIS);
            }
        }
    }

    /** A round trip under the network timeout: throws when the server no longer answers. */
    private static void probe(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SELECT 1");
        }
    }

    /** A pooled connection goes back clean: no longer subscribed, so it collects no notifications. */
    private static void unlisten(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("UNLISTEN *");
        }
        connection.setNetworkTimeout(Runnable::run, 0);
    }

    private static void close(Connection connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException e) {
                log.debug("Closing the listener connection failed", e);
            }
        }
    }
}

package io.workrow.queue.worker;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime's one LISTEN connection: turns insert notifications into wake-ups for the queue's
 * poller. A notification is only a hint; it is lost while this connection is down, so after every
 * (re)connect all pollers are woken to look for themselves, and polling stays as the safety net.
 * Reconnects with exponential backoff when the connection drops.
 */
final class InsertListener implements Runnable {

    /** The channel the {@code workrow_job_inserted} trigger notifies; the payload is the queue name. */
    static final String CHANNEL = "workrow_job_inserted";

    private static final Logger log = LoggerFactory.getLogger(InsertListener.class);

    private static final int RECEIVE_TIMEOUT_MILLIS = 500;
    private static final long MAX_RECONNECT_BACKOFF_MILLIS = 30_000;

    private final DataSource dataSource;
    private final Consumer<String> onInsert;
    private final Runnable onConnect;
    private final Wakeup stopSignal = new Wakeup();
    private volatile boolean running = true;
    private volatile boolean connected;
    /** When the connection was last lost (or first sought), in nanoTime; meaningful while not connected. */
    private volatile long disconnectedSince = System.nanoTime();

    /**
     * @param onInsert called with the queue name of each notification
     * @param onConnect called after each successful (re)connect
     */
    InsertListener(DataSource dataSource, Consumer<String> onInsert, Runnable onConnect) {
        this.dataSource = dataSource;
        this.onInsert = onInsert;
        this.onConnect = onConnect;
    }

    boolean isConnected() {
        return connected;
    }

    /** How long the listener has been without a connection; zero while connected. */
    java.time.Duration disconnectedFor() {
        return connected ? java.time.Duration.ZERO : java.time.Duration.ofNanos(System.nanoTime() - disconnectedSince);
    }

    void stop() {
        running = false;
        stopSignal.signal();
    }

    /**
     * Notifications are read from the driver's own connection, past the pool's proxy, so a pool
     * never sees that read fail. One statement through the proxy lets the pool see the broken
     * connection and evict it instead of lending it to the application.
     */
    private static void revealBroken(Connection connection) {
        if (connection == null) {
            return;
        }
        try (Statement probe = connection.createStatement()) {
            probe.execute("SELECT 1");
        } catch (SQLException expected) {
            // The connection is broken; the pool has now seen it fail.
        }
    }

    @Override
    public void run() {
        long backoff = 100;
        while (running) {
            Connection connection = null;
            SQLException failure = null;
            try {
                connection = dataSource.getConnection();
                connection.setAutoCommit(true);
                listen(connection, backoff > 100);
                backoff = 100;
                unlisten(connection);
            } catch (SQLException e) {
                failure = e;
            } catch (RuntimeException e) {
                failure = new SQLException(e.toString(), e);
            } finally {
                if (failure != null) {
                    // Probe before closing: closing first would return the broken connection to the pool.
                    revealBroken(connection);
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
    private void listen(Connection connection, boolean reconnecting) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("LISTEN " + CHANNEL);
        }
        PGConnection notifications = connection.unwrap(PGConnection.class);
        connected = true;
        if (reconnecting) {
            log.info("Insert listener reconnected; waking every queue to catch up");
        }
        onConnect.run();
        while (running) {
            PGNotification[] received = notifications.getNotifications(RECEIVE_TIMEOUT_MILLIS);
            if (received != null) {
                for (PGNotification notification : received) {
                    onInsert.accept(notification.getParameter());
                }
            }
        }
    }

    /** A pooled connection goes back clean: no longer subscribed, so it collects no notifications. */
    private static void unlisten(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("UNLISTEN *");
        }
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

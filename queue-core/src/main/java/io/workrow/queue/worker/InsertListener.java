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

    void stop() {
        running = false;
        stopSignal.signal();
    }

    @Override
    public void run() {
        long backoff = 100;
        while (running) {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(true);
                try (Statement statement = connection.createStatement()) {
                    statement.execute("LISTEN " + CHANNEL);
                }
                PGConnection notifications = connection.unwrap(PGConnection.class);
                connected = true;
                if (backoff > 100) {
                    log.info("Insert listener reconnected; waking every queue to catch up");
                }
                backoff = 100;
                onConnect.run();
                while (running) {
                    PGNotification[] received = notifications.getNotifications(RECEIVE_TIMEOUT_MILLIS);
                    if (received != null) {
                        for (PGNotification notification : received) {
                            onInsert.accept(notification.getParameter());
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                boolean wasConnected = connected;
                connected = false;
                if (!running) {
                    return;
                }
                if (wasConnected) {
                    log.warn("Insert listener lost its connection, reconnecting in {} ms (polling continues): {}",
                            backoff, e.toString());
                } else {
                    log.warn("Insert listener could not connect, retrying in {} ms (polling continues): {}",
                            backoff, e.toString());
                }
                stopSignal.sleep(backoff);
                backoff = Math.min(backoff * 2, MAX_RECONNECT_BACKOFF_MILLIS);
            } finally {
                connected = false;
            }
        }
    }
}

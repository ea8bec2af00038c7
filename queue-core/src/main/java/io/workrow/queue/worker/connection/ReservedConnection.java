package io.workrow.queue.worker.connection;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.AbstractDataSource;

/**
 * One connection borrowed from the application's pool and kept, for a runtime thread whose
 * statements must not queue behind the application's for a connection: the lease keeper's
 * renewals and the result writer's outcomes. When the application takes every connection its pool
 * has (a burst of requests, handlers holding connections), a renewal that waited for one would
 * cost the lease, and the job would run a second time elsewhere while its first run goes on.
 *
 * <p>The connection is borrowed at {@link #reserve()} (the runtime's start), or else at the first
 * statement, and kept until {@link #release()}; each statement gets it wrapped so that closing it
 * returns nothing to the pool. While kept it is in autocommit mode and has a network timeout, so a
 * silently dropped socket cannot hang a statement for good. Before a statement it is checked: one
 * marked closed (by the pool, as Hikari marks a connection a statement found broken), or one that
 * failed its last statement or was idle long and now fails {@link Connection#isValid}, is given
 * back (the pool sees it fail first) and another is borrowed.
 *
 * <p>It is meant for one thread. A {@link #release()} while a statement runs gives the connection
 * back when that statement's handle is closed, never under it. Replacing a broken connection
 * borrows from the pool like anything else: if the application has emptied the pool just then,
 * the replacement waits for the pool's connection timeout, as every statement did before.
 */
public final class ReservedConnection extends AbstractDataSource {

    private static final Logger log = LoggerFactory.getLogger(ReservedConnection.class);

    /** A kept connection idle this long is checked before its next statement: a firewall may have dropped it. */
    static final long IDLE_CHECK_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final int VALIDATION_TIMEOUT_SECONDS = 5;

    private final DataSource pool;
    private final String holder;
    private final int networkTimeoutMillis;
    private Connection held;
    private boolean pooledAutoCommit;
    private int pooledNetworkTimeout;
    private long lastUsedNanos;
    private boolean failed;
    /** Handles given out and not yet closed: the connection goes back only when none is open. */
    private int handlesOpen;
    private boolean released;

    /**
     * @param holder who keeps the connection, for the logs ("lease keeper", "result writer")
     * @param networkTimeoutMillis how long a statement may wait on the socket, beyond which the
     *     connection counts as broken; longer than the statement timeout, so that expires first
     */
    public ReservedConnection(DataSource pool, String holder, int networkTimeoutMillis) {
        this.pool = pool;
        this.holder = holder;
        this.networkTimeoutMillis = networkTimeoutMillis;
    }

    /**
     * Borrows the connection now, before the application can take them all; if the pool cannot
     * give one, the first statement tries again.
     */
    public synchronized void reserve() {
        if (held != null || released) {
            return;
        }
        try {
            borrow();
        } catch (SQLException | RuntimeException e) {
            log.warn("Could not reserve a connection for the {}; it borrows one at its first statement: {}", holder,
                    e.toString());
        }
    }

    @Override
    public synchronized Connection getConnection() throws SQLException {
        if (released) {
            // After shutdown: borrow per statement, as anything else does.
            return pool.getConnection();
        }
        if (held != null && !usable()) {
            log.info("The {}'s reserved connection is broken; borrowing another", holder);
            PoolConnections.revealBroken(held);
            giveBack();
        }
        if (held == null) {
            borrow();
        }
        handlesOpen++;
        return kept(held);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new UnsupportedOperationException("A reserved connection is borrowed with the pool's own credentials");
    }

    /** Gives the connection back to the pool, now or when the statement using it ends; later statements borrow. */
    public synchronized void release() {
        released = true;
        if (handlesOpen == 0) {
            giveBack();
        }
    }

    private void borrow() throws SQLException {
        Connection connection = pool.getConnection();
        try {
            pooledAutoCommit = connection.getAutoCommit();
            pooledNetworkTimeout = connection.getNetworkTimeout();
            if (!pooledAutoCommit) {
                connection.setAutoCommit(true);
            }
            connection.setNetworkTimeout(Runnable::run, networkTimeoutMillis);
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
        held = connection;
        failed = false;
        lastUsedNanos = System.nanoTime();
    }

    private boolean usable() {
        try {
            if (held.isClosed()) {
                return false;
            }
            if (!failed && System.nanoTime() - lastUsedNanos < IDLE_CHECK_NANOS) {
                return true;
            }
            if (!held.isValid(VALIDATION_TIMEOUT_SECONDS)) {
                return false;
            }
            // A statement may fail for its own reasons (a lock wait timed out): the connection is fine.
            failed = false;
            lastUsedNanos = System.nanoTime();
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /** Returns the connection to the pool as it was lent: its autocommit mode and network timeout restored. */
    private void giveBack() {
        if (held == null) {
            return;
        }
        Connection connection = held;
        held = null;
        try {
            connection.setNetworkTimeout(Runnable::run, pooledNetworkTimeout);
            if (!pooledAutoCommit) {
                connection.setAutoCommit(false);
            }
        } catch (SQLException | RuntimeException e) {
            log.debug("Could not restore the {}'s connection's settings: {}", holder, e.toString());
        }
        try {
            connection.close();
        } catch (SQLException | RuntimeException e) {
            log.debug("Closing the {}'s reserved connection failed: {}", holder, e.toString());
        }
    }

    private synchronized void statementFailed() {
        failed = true;
    }

    private synchronized void handleClosed() {
        handlesOpen--;
        lastUsedNanos = System.nanoTime();
        if (released && handlesOpen == 0) {
            giveBack();
        }
    }

    /**
     * {@code connection} for one statement: closing it keeps the connection, and a failure of the
     * connection or of a statement made from it has the connection checked before the next one.
     */
    private Connection kept(Connection connection) {
        boolean[] closed = {false};
        InvocationHandler handler = (proxy, method, arguments) -> switch (method.getName()) {
            case "close" -> {
                if (!closed[0]) {
                    closed[0] = true;
                    handleClosed();
                }
                yield null;
            }
            case "isClosed" -> closed[0] || connection.isClosed();
            case "equals" -> proxy == arguments[0];
            case "hashCode" -> System.identityHashCode(proxy);
            case "toString" -> "reserved for the " + holder + ": " + connection;
            default -> {
                if (closed[0]) {
                    throw new SQLException("This handle on the " + holder + "'s reserved connection is closed");
                }
                if (method.getName().equals("unwrap") && ((Class<?>) arguments[0]).isInstance(proxy)) {
                    yield proxy;
                }
                Object result = watched(connection, method, arguments);
                yield result instanceof Statement statement && method.getReturnType().isInterface()
                        ? watchedStatement(statement, method.getReturnType()) : result;
            }
        };
        return (Connection) Proxy.newProxyInstance(ReservedConnection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, handler);
    }

    private Object watchedStatement(Statement statement, Class<?> type) {
        return Proxy.newProxyInstance(ReservedConnection.class.getClassLoader(), new Class<?>[] {type},
                (proxy, method, arguments) -> switch (method.getName()) {
                    case "equals" -> proxy == arguments[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> watched(statement, method, arguments);
                });
    }

    /** Calls {@code method} on {@code target}; an {@link SQLException} marks the connection for a check. */
    private Object watched(Object target, Method method, Object[] arguments) throws Throwable {
        try {
            return method.invoke(target, arguments);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof SQLException) {
                statementFailed();
            }
            throw e.getCause();
        }
    }
}

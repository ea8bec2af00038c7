package io.workrow.queue.worker;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
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
 * statement, and kept until {@link #release()}; each
 * statement gets it wrapped so that closing it returns nothing to the pool. A connection the pool
 * or the driver has marked closed (a broken socket, a terminated backend: Hikari marks these as
 * soon as a statement fails with them) is given back and another borrowed at the next statement.
 * It is meant for one thread; the lock only keeps {@link #release()} at shutdown from racing it.
 */
final class ReservedConnection extends AbstractDataSource {

    private static final Logger log = LoggerFactory.getLogger(ReservedConnection.class);

    private final DataSource pool;
    private final String holder;
    private Connection held;
    private boolean released;

    /**
     * @param holder who keeps the connection, for the logs ("lease keeper", "result writer")
     */
    ReservedConnection(DataSource pool, String holder) {
        this.pool = pool;
        this.holder = holder;
    }

    /**
     * Borrows the connection now, before the application can take them all; if the pool cannot
     * give one, the first statement tries again.
     */
    synchronized void reserve() {
        try {
            if (held == null && !released) {
                held = pool.getConnection();
            }
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
        if (held != null && held.isClosed()) {
            log.info("The {}'s reserved connection was closed (broken or terminated); borrowing another", holder);
            giveBack();
        }
        if (held == null) {
            held = pool.getConnection();
        }
        return kept(held);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new UnsupportedOperationException("A reserved connection is borrowed with the pool's own credentials");
    }

    /** Gives the connection back to the pool; later statements borrow per statement. */
    synchronized void release() {
        released = true;
        giveBack();
    }

    private void giveBack() {
        if (held == null) {
            return;
        }
        try {
            held.close();
        } catch (SQLException e) {
            log.debug("Closing the {}'s reserved connection failed: {}", holder, e.toString());
        } finally {
            held = null;
        }
    }

    /** {@code connection}, whose {@code close()} keeps it: the next statement uses it again. */
    private static Connection kept(Connection connection) {
        InvocationHandler handler = (proxy, method, arguments) -> switch (method.getName()) {
            case "close" -> null;
            case "isClosed" -> connection.isClosed();
            case "equals" -> proxy == arguments[0];
            case "hashCode" -> System.identityHashCode(proxy);
            case "unwrap" -> ((Class<?>) arguments[0]).isInstance(proxy) ? proxy : invoke(connection, method, arguments);
            default -> invoke(connection, method, arguments);
        };
        return (Connection) Proxy.newProxyInstance(ReservedConnection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, handler);
    }

    private static Object invoke(Connection connection, Method method, Object[] arguments) throws Throwable {
        try {
            return method.invoke(connection, arguments);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}

package io.workrow.queue.worker.connection;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many connections a runtime may hold at once, and a start-up warning when the pool is
 * smaller: the listener, the result writer and the lease keeper hold one each for good
 * ({@link ReservedConnection}), and so do the handlers' own writes (extendLease, saveStep) from
 * the first; each poller, the scheduled job promoter, each maintenance task, (with
 * ordered queues) the worker registry and (with recurring jobs) their scheduler borrow one per
 * statement; every transactional handler holds
 * one while it runs. A pool below that makes handlers and claims queue for connections.
 */
public final class ConnectionBudget {

    private static final Logger log = LoggerFactory.getLogger(ConnectionBudget.class);

    /**
     * The starter's maintenance tasks (sweeper, retirer, retention and fairness pruners), each on
     * a thread of its own and so up to one statement each at once.
     */
    static final int MAINTENANCE_TASKS = 4;

    private final DataSource dataSource;
    private final boolean listening;
    private final int pollers;
    private final int transactionalHandlers;
    private final boolean registry;
    private final boolean recurring;

    public ConnectionBudget(DataSource dataSource, boolean listening, int pollers, int transactionalHandlers,
            boolean registry, boolean recurring) {
        this.dataSource = dataSource;
        this.listening = listening;
        this.pollers = pollers;
        this.transactionalHandlers = transactionalHandlers;
        this.registry = registry;
        this.recurring = recurring;
    }

    /**
     * Connections this runtime may hold at once: listener, pollers, writer, keeper, handlers' own
     * writes, promoter, maintenance tasks, worker registry, transactional handlers.
     */
    public int needed() {
        return (listening ? 1 : 0) + pollers + 4 + MAINTENANCE_TASKS + (registry ? 1 : 0) + (recurring ? 1 : 0) + transactionalHandlers;
    }

    public void warnIfShort() {
        Integer poolSize = maximumPoolSize(dataSource);
        if (poolSize != null && poolSize < needed()) {
            log.warn("The connection pool allows {} connections, but Workrow may hold {} at once (listener {},"
                    + " pollers {}, result writer 1, lease keeper 1, handlers' own writes 1, scheduler 1, maintenance {},"
                    + " worker registry {},"
                    + " recurring jobs {}, transactional handlers {}),"
                    + " besides what the application itself uses. Raise the pool's maximum size (for Hikari,"
                    + " spring.datasource.hikari.maximum-pool-size) or lower the concurrency of transactional"
                    + " queues.", poolSize, needed(), listening ? 1 : 0, pollers, MAINTENANCE_TASKS, registry ? 1 : 0,
                    recurring ? 1 : 0, transactionalHandlers);
        }
    }

    /**
     * The pools whose maximum size is read, by the class that declares the accessor: HikariCP,
     * Commons DBCP 2, Tomcat JDBC. Also what AOT processing registers for reflection.
     */
    public static final Map<String, String> POOL_SIZE_ACCESSORS = Map.of(
            "com.zaxxer.hikari.HikariConfig", "getMaximumPoolSize",
            "org.apache.commons.dbcp2.BasicDataSource", "getMaxTotal",
            "org.apache.tomcat.jdbc.pool.DataSourceProxy", "getMaxActive");

    /** The pool's maximum size when the DataSource says (Hikari and most pools name it so), else null. */
    public static Integer maximumPoolSize(DataSource dataSource) {
        for (String name : Set.copyOf(POOL_SIZE_ACCESSORS.values())) {
            try {
                Method method = dataSource.getClass().getMethod(name);
                Object value = method.invoke(dataSource);
                if (value instanceof Integer size && size > 0) {
                    return size;
                }
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                // not this pool's accessor (or, in a native image, one not registered for reflection)
            }
        }
        return null;
    }
}

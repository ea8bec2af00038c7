package io.workrow.queue.spring.handler;

import java.lang.reflect.Method;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Picks the transaction manager a transactional handler runs in: the one that manages Workrow's
 * own {@code DataSource}. Any other (another database's, Kafka's, MongoDB's) would leave the job's
 * completion outside the handler's transaction, in autocommit, and effectively-once would be
 * silently lost, so start-up fails instead, naming the handler and the managers it found.
 */
public final class HandlerTransactionManagers {

    private final DataSource dataSource;
    private final ObjectProvider<PlatformTransactionManager> managers;

    public HandlerTransactionManagers(DataSource dataSource, ObjectProvider<PlatformTransactionManager> managers) {
        this.dataSource = dataSource;
        this.managers = managers;
    }

    /** The manager of Workrow's DataSource for {@code handler}; throws naming the handler when there is none. */
    public PlatformTransactionManager managerFor(HandlerMethod handler) {
        List<PlatformTransactionManager> all = managers.orderedStream().toList();
        List<PlatformTransactionManager> matching = all.stream()
                .filter(manager -> unwrap(managedDataSource(manager)) == unwrap(dataSource)).toList();
        if (matching.size() == 1) {
            return matching.get(0);
        }
        String found = all.isEmpty() ? "none" : all.stream().map(manager -> manager.getClass().getSimpleName()
                + describe(managedDataSource(manager))).toList().toString();
        throw new QueueHandlerDefinitionException("@QueueHandler method " + handler.description()
                + " is transactional, but " + (matching.isEmpty() ? "no" : "more than one")
                + " PlatformTransactionManager manages Workrow's DataSource (found: " + found + "). Its job's"
                + " completion must commit in the handler's transaction: define a DataSourceTransactionManager"
                + " (or JpaTransactionManager) for that DataSource, or drop transactional = true.");
    }

    /** The DataSource a manager commits on, when it says (DataSource, JDBC and JPA managers do), else null. */
    static DataSource managedDataSource(PlatformTransactionManager manager) {
        if (manager instanceof DataSourceTransactionManager jdbc) {
            return jdbc.getDataSource();
        }
        try {
            // JPA's and others' managers, without a compile-time dependency on them (AOT hints:
            // WorkrowAutoConfigurationRuntimeHints).
            Method getter = manager.getClass().getMethod("getDataSource");
            Object value = getter.invoke(manager);
            return value instanceof DataSource managed ? managed : null;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // LinkageError: a native image's manager not registered for reflection
            return null;
        }
    }

    private static Object unwrap(DataSource dataSource) {
        return dataSource instanceof TransactionAwareDataSourceProxy proxy ? proxy.getTargetDataSource() : dataSource;
    }

    private static String describe(DataSource managed) {
        return managed == null ? " (no DataSource)" : " (another DataSource)";
    }
}

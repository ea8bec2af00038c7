package io.workrow.queue.test;

import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.test.database.ClassDatabase;
import io.workrow.queue.test.database.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * For tests without Spring: gives the test class a fresh database with Workrow's tables migrated
 * into {@code public}, and drops it after the class. Register it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final WorkrowDatabaseExtension database = new WorkrowDatabaseExtension();
 *
 * WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())...
 * }</pre>
 *
 * Spring Boot tests use {@link WorkrowTest} instead.
 */
public final class WorkrowDatabaseExtension implements BeforeAllCallback, AfterAllCallback {

    private static final SqlIdentifier SCHEMA = SqlIdentifier.of("schema", "public");

    private final ClassDatabase database = new ClassDatabase(10,
            dataSource -> new WorkrowMigrations(dataSource, SCHEMA).migrate());

    @Override
    public void beforeAll(ExtensionContext context) {
        database.beforeAll(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        database.afterAll(context);
    }

    /** A pool of connections to the class's database (at most 10). */
    public DataSource dataSource() {
        return database.dataSource();
    }

    public JdbcTemplate jdbc() {
        return new JdbcTemplate(dataSource());
    }

    /** A store on the class's database, for {@code WorkerRuntime.Builder.store} and {@code JdbcJobQueue}. */
    public JobStore store() {
        return JobStore.of(dataSource(), SCHEMA);
    }

    public TestDatabase database() {
        return database.database();
    }
}

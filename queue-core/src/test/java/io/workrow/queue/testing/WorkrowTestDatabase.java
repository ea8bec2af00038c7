package io.workrow.queue.testing;

import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import io.workrow.queue.test.database.ClassDatabase;
import io.workrow.queue.test.database.PostgresServer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Gives a test class its own freshly created PostgreSQL database, with Workrow's schema migrated,
 * on the server {@link PostgresServer} picks; the database is dropped after the class. Register
 * it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final WorkrowTestDatabase database = new WorkrowTestDatabase();
 * }</pre>
 */
public final class WorkrowTestDatabase implements BeforeAllCallback, AfterAllCallback {

    private final SqlIdentifier schema;
    private final ClassDatabase database;

    /** A database with Workrow's tables in {@code public}, migrated to the latest version. */
    public WorkrowTestDatabase() {
        this(SqlIdentifier.of("schema", "public"), dataSource -> new WorkrowMigrations(dataSource,
                SqlIdentifier.of("schema", "public")).migrate());
    }

    private WorkrowTestDatabase(SqlIdentifier schema, java.util.function.Consumer<DataSource> prepare) {
        this.schema = schema;
        this.database = new ClassDatabase(40, prepare);
    }

    /** A database with nothing created in it, for tests of the migrations themselves. */
    public static WorkrowTestDatabase empty() {
        return new WorkrowTestDatabase(SqlIdentifier.of("schema", "public"), dataSource -> { });
    }

    /**
     * A store on a pool of {@code size} connections of its own, as another node would have; the
     * caller closes the pool ({@code store.dataSource()}).
     */
    public JobStore otherNode(int size) {
        com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource();
        pool.setJdbcUrl(jdbcUrl());
        pool.setUsername(server().user());
        pool.setPassword(server().password());
        pool.setMaximumPoolSize(size);
        return JobStore.of(pool, schema);
    }

    /** The store on this database, as the class that has every statement's own method. */
    public WriteOnceStore writeOnceStore() {
        return new WriteOnceStore(dataSource(), schema);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        database.beforeAll(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        database.afterAll(context);
    }

    public DataSource dataSource() {
        return database.dataSource();
    }

    public JdbcTemplate jdbc() {
        return new JdbcTemplate(dataSource());
    }

    public SqlIdentifier schema() {
        return schema;
    }

    /** The store on this database. */
    public JobStore store() {
        return JobStore.of(dataSource(), schema);
    }

    /** Writes to jobs behind the runtime's back. */
    public JobRows rows() {
        return new JobRows(jdbc(), schema);
    }

    /** The database's name on the server. */
    public String name() {
        return database.database().name();
    }

    public String jdbcUrl() {
        return database.database().jdbcUrl();
    }

    public PostgresServer server() {
        return database.database().server();
    }

    /** Deletes every job and fair queue setting, for tests that share the class's database between methods. */
    public void deleteAllJobs() {
        if (store() instanceof WriteOnceStore) {
            jdbc().update("TRUNCATE " + WriteOnceStore.JOB_TABLES.stream().map(table -> schema.quoted() + "." + table)
                    .collect(java.util.stream.Collectors.joining(", ")));
        } else {
            jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_job");
        }
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_fairness_state");
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_fairness_key");
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_queue_rule");
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_lease_holder");
    }
}

package io.workrow.queue.testing;

import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.RowPerJobStore;
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

    /**
     * The layout a plain {@link #WorkrowTestDatabase()} is migrated to: the latest (write-once),
     * or with {@code -Dworkrow.test.layout=row-per-job} the one-row-per-job layout of version
     * {@value WorkrowMigrations#ROW_PER_JOB_VERSION}, on which the tests written for either layout
     * still run while its store is kept.
     */
    public static final boolean WRITE_ONCE_BY_DEFAULT = !"row-per-job".equals(System.getProperty("workrow.test.layout"));

    /** A database with Workrow's tables in {@code public}. */
    public WorkrowTestDatabase() {
        this("public", WRITE_ONCE_BY_DEFAULT ? migrations -> migrations
                : migrations -> migrations.upTo(WorkrowMigrations.ROW_PER_JOB_VERSION));
    }

    private WorkrowTestDatabase(String schema,
            java.util.function.UnaryOperator<WorkrowMigrations> version) {
        this(SqlIdentifier.of("schema", schema), dataSource -> version.apply(new WorkrowMigrations(dataSource,
                SqlIdentifier.of("schema", schema))).migrate());
    }

    private WorkrowTestDatabase(SqlIdentifier schema, java.util.function.Consumer<DataSource> prepare) {
        this.schema = schema;
        this.database = new ClassDatabase(40, prepare);
    }

    /**
     * A database with the one-row-per-job layout whatever {@code workrow.test.layout} says, for the
     * tests of that layout's own statements.
     */
    public static WorkrowTestDatabase withRowPerJobLayout() {
        return new WorkrowTestDatabase("public", migrations -> migrations.upTo(WorkrowMigrations.ROW_PER_JOB_VERSION));
    }

    /** A database with nothing created in it, for tests of the migrations themselves. */
    public static WorkrowTestDatabase empty() {
        return new WorkrowTestDatabase(SqlIdentifier.of("schema", "public"), dataSource -> { });
    }

    /**
     * A database with the write-once layout whatever {@code workrow.test.layout} says, for the
     * tests of {@link WriteOnceStore}'s own statements.
     */
    public static WorkrowTestDatabase withWriteOnceLayout() {
        return new WorkrowTestDatabase("public", migrations -> migrations);
    }

    /** The write-once layout's store on this database. */
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

    /** The store for this database's layout. */
    public JobStore store() {
        return JobStore.of(dataSource(), schema);
    }

    /** Writes to job rows behind the runtime's back, in the SQL of this database's layout. */
    public JobRows rows() {
        return new JobRows(jdbc(), schema, store() instanceof WriteOnceStore);
    }

    /** Today's store, for the tests of its own statements (they need today's layout). */
    public RowPerJobStore rowPerJobStore() {
        return new RowPerJobStore(dataSource(), schema);
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

package io.workrow.queue.migration;

import io.workrow.queue.store.SqlIdentifier;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates and upgrades Workrow's tables with Workrow's own Flyway instance.
 *
 * <p>The scripts live in Workrow's own classpath package ({@value #LOCATION}), never in
 * {@code db/migration}, and their history goes to its own table ({@value #HISTORY_TABLE}), so they
 * never mix with the application's migrations, even in the same schema. Teams whose DBA applies
 * SQL by hand can skip this class and run the same scripts from the jar.
 */
public final class WorkrowMigrations {

    /** Classpath location of Workrow's migration scripts. */
    public static final String LOCATION = "classpath:io/workrow/queue/migration";

    /** The migration that moves jobs to the write-once layout (docs/storage-layout.md). */
    public static final String WRITE_ONCE_VERSION = "13";

    /** The latest migration: what this version of Workrow runs on. */
    public static final String LATEST_VERSION = "20";

    /** The last version of the one-row-per-job layout. */
    public static final String ROW_PER_JOB_VERSION = "12";

    /** Flyway history table for Workrow's migrations. */
    public static final String HISTORY_TABLE = "workrow_schema_history";

    private static final Logger log = LoggerFactory.getLogger(WorkrowMigrations.class);

    private final DataSource dataSource;
    private final SqlIdentifier schema;
    private final String target;

    public WorkrowMigrations(DataSource dataSource, SqlIdentifier schema) {
        this(dataSource, schema, null);
    }

    private WorkrowMigrations(DataSource dataSource, SqlIdentifier schema, String target) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.target = target;
    }

    /**
     * These migrations up to {@code version} and no further: the version before
     * {@value #WRITE_ONCE_VERSION} keeps the one-row-per-job layout, for the tests and benchmarks
     * of the move to the write-once layout, and for a DBA who applies the layout change in a window
     * of its own (the runtime refuses to start on it).
     */
    public WorkrowMigrations upTo(String version) {
        return new WorkrowMigrations(dataSource, schema, version);
    }

    /** Applies pending migrations to the schema, creating it if needed, and returns how many ran. */
    public int migrate() {
        return migrate(WorkrowMigrations.class.getClassLoader());
    }

    /** {@link #migrate()} with the scripts read through {@code classLoader}. */
    int migrate(ClassLoader classLoader) {
        Flyway flyway = Flyway.configure(classLoader)
                .dataSource(dataSource)
                .schemas(schema.name())
                .defaultSchema(schema.name())
                .createSchemas(true)
                .table(HISTORY_TABLE)
                .locations(LOCATION)
                // Scripts read by name, as a native image can, and no Java migrations: with both
                // providers given, Flyway lists no classpath directory, which a native image cannot.
                .resourceProvider(new MigrationScripts(classLoader))
                .javaMigrationClassProvider(List::of)
                // The schema usually holds the application's tables already; start Workrow's own
                // history at version 0 so that V1 still runs there.
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .cleanDisabled(true)
                .target(target == null ? "latest" : target)
                .load();
        MigrateResult result = flyway.migrate();
        if (result.migrationsExecuted > 0) {
            log.info("Workrow schema migrated: schema={}, migrations={}, version={}",
                    schema, result.migrationsExecuted, result.targetSchemaVersion);
        }
        return result.migrationsExecuted;
    }
}

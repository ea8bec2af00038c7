package io.workrow.queue.migration;

import io.workrow.queue.store.SqlIdentifier;
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

    /** Flyway history table for Workrow's migrations. */
    public static final String HISTORY_TABLE = "workrow_schema_history";

    private static final Logger log = LoggerFactory.getLogger(WorkrowMigrations.class);

    private final DataSource dataSource;
    private final SqlIdentifier schema;
    private final String[] locations;

    public WorkrowMigrations(DataSource dataSource, SqlIdentifier schema) {
        this(dataSource, schema, new String[] {LOCATION});
    }

    private WorkrowMigrations(DataSource dataSource, SqlIdentifier schema, String[] locations) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.locations = locations;
    }

    /**
     * Workrow's migrations and, after them, the write-once layout's ({@code V13}, kept apart until
     * the runtime moves to it): for its tests and benchmarks.
     */
    public static WorkrowMigrations withWriteOnceLayout(DataSource dataSource, SqlIdentifier schema) {
        return new WorkrowMigrations(dataSource, schema,
                new String[] {LOCATION, io.workrow.queue.store.WriteOnceStore.MIGRATION_LOCATION});
    }

    /** Applies pending migrations to the schema, creating it if needed, and returns how many ran. */
    public int migrate() {
        Flyway flyway = Flyway.configure(WorkrowMigrations.class.getClassLoader())
                .dataSource(dataSource)
                .schemas(schema.name())
                .defaultSchema(schema.name())
                .createSchemas(true)
                .table(HISTORY_TABLE)
                .locations(locations)
                // The schema usually holds the application's tables already; start Workrow's own
                // history at version 0 so that V1 still runs there.
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .cleanDisabled(true)
                .load();
        MigrateResult result = flyway.migrate();
        if (result.migrationsExecuted > 0) {
            log.info("Workrow schema migrated: schema={}, migrations={}, version={}",
                    schema, result.migrationsExecuted, result.targetSchemaVersion);
        }
        return result.migrationsExecuted;
    }
}

package io.workrow.queue.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.workrow.queue.store.SqlIdentifier;
import org.flywaydb.core.Flyway;
import io.workrow.queue.testing.WorkrowTestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class WorkrowMigrationsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = WorkrowTestDatabase.empty();

    private int tablesNamed(String name) {
        return database.jdbc().queryForObject("SELECT count(*) FROM pg_tables WHERE tablename = ?", Integer.class, name);
    }

    @Test
    void injectedSchemaNameFailsClearlyAndExecutesNothing() {
        database.jdbc().execute("CREATE TABLE IF NOT EXISTS x (id int)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new WorkrowMigrations(database.dataSource(),
                        SqlIdentifier.of("workrow.schema", "public; drop table x")).migrate())
                .withMessage("workrow.schema must be a plain SQL identifier matching ^[a-z_][a-z0-9_]*$,"
                        + " was 'public; drop table x'");
        assertThat(tablesNamed("x")).isEqualTo(1);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'public;%'",
                Integer.class)).isZero();
    }

    @Test
    void migratesIntoAConfiguredSchemaBesideTheApplicationsTablesAndIsRepeatable() {
        database.jdbc().execute("CREATE TABLE IF NOT EXISTS app_orders (id int)");
        WorkrowMigrations migrations = new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "jobs"));

        assertThat(migrations.migrate()).isEqualTo(7);
        assertThat(migrations.migrate()).isZero();

        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'jobs' AND tablename IN ('workrow_job',"
                        + " 'workrow_schema_history')", Integer.class)).isEqualTo(2);
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = 'jobs' AND tablename = 'workrow_job'",
                Integer.class)).isEqualTo(13);
    }

    @Test
    void jobsQueuedBeforeFairQueuingTakeTheirPartitionKeyAsFairnessKey() {
        Flyway.configure(WorkrowMigrations.class.getClassLoader()).dataSource(database.dataSource())
                .schemas("upgraded").defaultSchema("upgraded").createSchemas(true)
                .table(WorkrowMigrations.HISTORY_TABLE).locations(WorkrowMigrations.LOCATION).target("6")
                .load().migrate();
        database.jdbc().update("""
                INSERT INTO upgraded.workrow_job (queue, partition_key, partition_bucket, payload, max_attempts, status,
                                                  finished_at)
                VALUES ('reports', 'tenant-a', 0, '{}', 3, 'pending', NULL),
                       ('reports', 'tenant-b', 0, '{}', 3, 'dead', now()),
                       ('reports', 'tenant-c', 0, '{}', 3, 'completed', now()),
                       ('reports', NULL, 0, '{}', 3, 'pending', NULL)
                """);

        assertThat(new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "upgraded")).migrate())
                .isEqualTo(1);
        assertThat(database.jdbc().queryForList(
                "SELECT fairness_key FROM upgraded.workrow_job ORDER BY id", String.class))
                .as("pending and dead jobs may still run and are keyed; finished history is left keyless")
                .containsExactly("tenant-a", "tenant-b", "", "");
    }

    @Test
    void migratesIntoANonEmptyCurrentSchema() {
        database.jdbc().execute("CREATE TABLE IF NOT EXISTS app_customers (id int)");
        SqlIdentifier current = io.workrow.queue.store.SchemaLookup.currentSchema(database.dataSource());
        assertThat(current.name()).isEqualTo("public");
        new WorkrowMigrations(database.dataSource(), current).migrate();
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename = 'workrow_job'",
                Integer.class)).isEqualTo(1);
    }
}

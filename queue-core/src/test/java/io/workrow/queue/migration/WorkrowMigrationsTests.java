package io.workrow.queue.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class WorkrowMigrationsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = WorkrowTestDatabase.empty();

    /** Workrow's schema as an older version left it: migrated up to {@code version} only. */
    private static void migrateUpTo(String schema, String version) {
        new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", schema)).upTo(version).migrate();
    }

    private int tablesNamed(String name) {
        return database.jdbc().queryForObject("SELECT count(*) FROM pg_tables WHERE tablename = ?", Integer.class, name);
    }

    @Test
    void theScriptsNamedOneByOneAreEveryScriptInTheDirectoryUpToTheLatestVersion() throws Exception {
        // The directory of the first script: the package's directory of the test classes comes first.
        Path directory = Path.of(WorkrowMigrations.class.getClassLoader()
                .getResource(MigrationScripts.path(MigrationScripts.NAMES.get(0))).toURI()).getParent();
        try (Stream<Path> files = Files.list(directory)) {
            assertThat(MigrationScripts.NAMES).containsExactlyInAnyOrderElementsOf(
                    files.map(file -> file.getFileName().toString()).filter(name -> name.endsWith(".sql")).toList());
        }
        assertThat(MigrationScripts.NAMES.get(MigrationScripts.NAMES.size() - 1))
                .startsWith("V" + WorkrowMigrations.LATEST_VERSION + "__");
        MigrationScripts scripts = new MigrationScripts(getClass().getClassLoader());
        assertThat(scripts.getResources("V", new String[] {".sql"})).hasSize(MigrationScripts.NAMES.size());
        try (BufferedReader first = new BufferedReader(scripts.getResource("V1__create_workrow_job.sql").read())) {
            assertThat(first.lines()).anySatisfy(line -> assertThat(line).contains("CREATE TABLE"));
        }
        assertThat(scripts.getResource("V99__missing.sql")).isNull();
    }

    @Test
    void migratingReadsEachScriptByNameAndListsNoClasspathDirectory() throws Exception {
        // A native image can read a resource by name but cannot list a directory.
        List<String> listed = new CopyOnWriteArrayList<>();
        ClassLoader recording = new ClassLoader(getClass().getClassLoader()) {
            @Override
            public Enumeration<URL> getResources(String name) throws IOException {
                listed.add(name);
                return super.getResources(name);
            }
        };
        WorkrowMigrations migrations = new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "listed"));
        assertThat(migrations.migrate(recording)).isEqualTo(MigrationScripts.NAMES.size());
        assertThat(listed).noneMatch(name -> name.startsWith(MigrationScripts.DIRECTORY));
        assertThat(database.jdbc().queryForList("SELECT script FROM listed.workrow_schema_history WHERE version IS NOT NULL"
                + " AND version <> '0' ORDER BY installed_rank", String.class))
                .as("the history names each script as Flyway's own scanning did").isEqualTo(MigrationScripts.NAMES);
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

        assertThat(migrations.migrate()).isEqualTo(Integer.parseInt(WorkrowMigrations.LATEST_VERSION));
        assertThat(migrations.migrate()).isZero();

        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'jobs' AND tablename IN ('workrow_job_data',"
                        + " 'workrow_ready', 'workrow_claim', 'workrow_schema_history')", Integer.class)).isEqualTo(4);
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM pg_views WHERE schemaname = 'jobs' AND viewname = 'workrow_job'",
                Integer.class)).as("what people query").isOne();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM app_orders", Integer.class))
                .as("the application's table untouched").isZero();
    }

    @Test
    void jobsQueuedBeforeFairQueuingTakeTheirPartitionKeyAsFairnessKey() {
        migrateUpTo("upgraded", "6");
        database.jdbc().update("""
                INSERT INTO upgraded.workrow_job (queue, partition_key, partition_bucket, payload, max_attempts, status,
                                                  finished_at)
                VALUES ('reports', 'tenant-a', 0, '{}', 3, 'pending', NULL),
                       ('reports', 'tenant-b', 0, '{}', 3, 'dead', now()),
                       ('reports', 'tenant-c', 0, '{}', 3, 'completed', now()),
                       ('reports', NULL, 0, '{}', 3, 'pending', NULL)
                """);

        assertThat(new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "upgraded"))
                .upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate()).as("versions 7 to 12").isEqualTo(6);
        assertThat(database.jdbc().queryForList(
                "SELECT fairness_key FROM upgraded.workrow_job ORDER BY id", String.class))
                .as("pending and dead jobs may still run and are keyed; finished history is left keyless")
                .containsExactly("tenant-a", "tenant-b", "", "");
    }

    @Test
    void everyJobPendingBeforeTheClaimIndexesWereSplitIsStillClaimed() {
        migrateUpTo("split", "7");
        // Without keys; with a partition key; with only a fairness key; with a partition key but the
        // fairness key '' (as a producer older than version 7 writes it).
        database.jdbc().update("""
                INSERT INTO split.workrow_job (queue, partition_key, fairness_key, partition_bucket, payload,
                                               max_attempts)
                VALUES ('reports', NULL, '', 0, '{}', 3), ('reports', 'order-1', 'order-1', 0, '{}', 3),
                       ('reports', NULL, 'tenant-a', 0, '{}', 3), ('reports', 'order-2', '', 0, '{}', 3)
                """);

        SqlIdentifier schema = SqlIdentifier.of("schema", "split");
        assertThat(new WorkrowMigrations(database.dataSource(), schema).migrate()).as("versions 8 to the latest")
                .isEqualTo(Integer.parseInt(WorkrowMigrations.LATEST_VERSION) - 7);
        assertThat(JobStore.of(database.dataSource(), schema).claims()
                .claim("reports", "w", 10, Duration.ofMinutes(1), false))
                .extracting(ClaimedPosition::partitionKey)
                .containsExactlyInAnyOrder(null, "order-1", null, "order-2");
    }

    @Test
    void migratesIntoANonEmptyCurrentSchema() {
        database.jdbc().execute("CREATE TABLE IF NOT EXISTS app_customers (id int)");
        SqlIdentifier current = io.workrow.queue.store.SchemaLookup.currentSchema(database.dataSource());
        assertThat(current.name()).isEqualTo("public");
        new WorkrowMigrations(database.dataSource(), current).migrate();
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename = 'workrow_job_data'",
                Integer.class)).isEqualTo(1);
    }

    @Test
    void deadlinesOfJobsThatWaitAcrossTheUpgradeAreNotedAndLaterOnesByTheTriggerInTheirOwnSchema() {
        migrateUpTo("deadlines", "18");
        database.jdbc().update("""
                INSERT INTO deadlines.workrow_job_data (id, queue, partition_bucket, payload, max_attempts, expires_at)
                VALUES (1, 'q', 0, '{}', 5, now() + interval '1 hour'), (2, 'q', 0, '{}', 5, now() + interval '1 hour'),
                       (3, 'q', 0, '{}', 5, now() + interval '1 hour'), (4, 'q', 0, '{}', 5, NULL)
                """);
        database.jdbc().update("""
                INSERT INTO deadlines.workrow_ready (id, queue, priority, run_at, max_attempts, partition_bucket)
                VALUES (1, 'q', 0, now(), 5, 0), (4, 'q', 0, now(), 5, 0)
                """);
        database.jdbc().update("""
                INSERT INTO deadlines.workrow_scheduled (id, queue, priority, run_at, max_attempts, partition_bucket)
                VALUES (2, 'q', 0, now() + interval '1 minute', 5, 0)
                """);

        new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "deadlines")).migrate();

        assertThat(database.jdbc().queryForList("SELECT job_id FROM deadlines.workrow_deadline ORDER BY job_id",
                Long.class)).as("the waiting jobs' deadlines; job 3 ended, job 4 has none").containsExactly(1L, 2L);
        database.jdbc().update("""
                INSERT INTO deadlines.workrow_job_data (id, queue, partition_bucket, payload, max_attempts, expires_at)
                VALUES (5, 'q', 0, '{}', 5, now() + interval '2 hours'), (6, 'q', 0, '{}', 5, NULL)
                """);
        database.jdbc().update("UPDATE deadlines.workrow_job_data SET expires_at = expires_at + interval '1 hour'"
                + " WHERE id = 1");
        assertThat(database.jdbc().queryForList("SELECT job_id FROM deadlines.workrow_deadline ORDER BY job_id",
                Long.class)).as("an insert and a moved deadline noted; no row without a deadline")
                .containsExactly(1L, 1L, 2L, 5L);
    }

    @Test
    void aSecondSchemaInOneDatabaseGetsItsOwnOutcomeDaysAndFunctionsThatLookOnlyInIt() {
        new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "public")).migrate();
        new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "tenant_two")).migrate();
        for (String schema : List.of("public", "tenant_two")) {
            assertThat(database.jdbc().queryForObject("""
                    SELECT count(*) FROM pg_inherits
                    WHERE inhparent = (? || '.workrow_outcome')::regclass
                      AND inhrelid::regclass::text ~ 'workrow_outcome_[0-9]{8}$'
                    """, Integer.class, schema)).as("today and a week ahead in " + schema).isEqualTo(8);
            assertThat(database.jdbc().queryForList("""
                    SELECT DISTINCT unnest(proconfig) FROM pg_proc
                    WHERE pronamespace = ?::regnamespace AND proname LIKE 'workrow\\_%'
                    """, String.class, schema)).containsAnyOf("search_path=" + schema + ", pg_temp")
                    .allMatch(path -> path.equals("search_path=" + schema) || path.equals("search_path=" + schema
                            + ", pg_temp"), "only its own schema");
        }
    }
}

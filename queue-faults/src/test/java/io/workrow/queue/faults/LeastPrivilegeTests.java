package io.workrow.queue.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.maintenance.ExhaustedJobRetirer;
import io.workrow.queue.maintenance.PartitionKeeper;
import io.workrow.queue.maintenance.PastDeadlineCanceller;
import io.workrow.queue.maintenance.RetentionPruner;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The runtime, the producer, the operator API and maintenance under a role that may only read
 * and write rows: the migrations ran as the schema's owner, the application connects as a role
 * with DML on the tables, use of the sequences and (for the write-once layout's partitions, which
 * only their owner may create and drop) execution of its five partition functions, and no right to change
 * the schema.
 */
class LeastPrivilegeTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final String ROLE = "workrow_dml_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    @BeforeAll
    static void role() {
        JdbcTemplate owner = database.jdbc();
        owner.execute("CREATE ROLE " + ROLE + " LOGIN");
        owner.execute("GRANT USAGE ON SCHEMA public TO " + ROLE);
        owner.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + ROLE);
        owner.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO " + ROLE);
        // The partition functions run as their owner, for whom they are granted
        // (docs/operations.md, "Least privilege").
        owner.execute("GRANT EXECUTE ON FUNCTION workrow_add_outcome_day(date), workrow_detach_outcome_day(text),"
                + " workrow_drop_outcome_day(text), workrow_extend_job_data(bigint),"
                + " workrow_retire_job_data(timestamptz) TO " + ROLE);
        // What PostgreSQL grants to PUBLIC by default is taken away, so only the grants above count.
        owner.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    }

    @AfterAll
    static void dropRole() {
        JdbcTemplate owner = database.jdbc();
        owner.execute("REASSIGN OWNED BY " + ROLE + " TO CURRENT_USER");
        owner.execute("DROP OWNED BY " + ROLE);
        owner.execute("DROP ROLE " + ROLE);
    }

    @Test
    void aRoleWithOnlyDmlRunsEverything() {
        SimpleDriverDataSource dml = new SimpleDriverDataSource(new org.postgresql.Driver(), database.jdbcUrl(), ROLE, "");
        JdbcTemplate asRole = new JdbcTemplate(dml);
        assertThat(asRole.queryForObject("SELECT has_schema_privilege(current_user, 'public', 'CREATE')", Boolean.class))
                .as("the role cannot change the schema").isFalse();
        JobStore store = JobStore.of(dml, SqlIdentifier.of("schema", "public"));
        JdbcJobQueue queue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        List<Long> ids = new ArrayList<>(queue.enqueueAll(List.of(JobRequest.of("least", Map.of("n", 1)),
                JobRequest.of("least", Map.of("n", 2)).idempotencyKey("once"),
                JobRequest.of("least", Map.of("n", 3)).partitionKey("k"))));
        ids.add(queue.enqueue(JobRequest.of("least", Map.of("n", 4)).idempotencyKey("once")));
        ids.add(queue.enqueue(JobRequest.of("least", Map.of("n", 5)).delay(Duration.ofMillis(300))));
        List<Integer> handled = java.util.Collections.synchronizedList(new ArrayList<>());
        WorkerRuntime runtime = WorkerRuntime.builder(dml)
                .handler("least", Map.class, (payload, job) -> handled.add((Integer) payload.get("n")), QueueOptions.defaults())
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 4);
        } finally {
            runtime.stop();
        }
        assertThat(handled).containsExactlyInAnyOrder(1, 2, 3, 5);
        JdbcQueueAdmin admin = new JdbcQueueAdmin(store);
        admin.pause("least", "maintenance window");
        assertThat(admin.pausedQueues()).containsExactly("least");
        assertThat(admin.resume("least")).isTrue();
        assertThat(admin.stats()).isNotEmpty();
        new StaleLeaseSweeper(store, 100).runOnce();
        new ExhaustedJobRetirer(store, 100).runOnce();
        // A deadline noted by the job data's trigger as the role enqueues, swept by the role.
        long expiring = queue.enqueue(JobRequest.of("least-unworked", Map.of("n", 6))
                .expiresAt(java.time.Instant.now().plusMillis(300)));
        PastDeadlineCanceller canceller = new PastDeadlineCanceller(store, 100, io.workrow.queue.metrics.QueueMetrics.NOOP);
        await().atMost(Duration.ofSeconds(10)).until(() -> canceller.runOnce() == 1);
        assertThat(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, expiring))
                .isEqualTo("cancelled");
        // A day of the outcome log the keeper did not create in time: the owner drops a day
        // ahead, and the role's keeper creates it again (and moves nothing, as it is empty).
        String ahead = database.jdbc().queryForObject("""
                SELECT 'workrow_outcome_' || to_char(((now() + interval '2 days') AT TIME ZONE 'UTC')::date,
                                                     'YYYYMMDD')
                """, String.class);
        database.jdbc().execute("DROP TABLE " + ahead);
        assertThat(new PartitionKeeper(store).runOnce()).as("partitions created by the role").isPositive();
        assertThat(database.jdbc().queryForObject("SELECT to_regclass(?) IS NOT NULL", Boolean.class, ahead))
                .isTrue();
        // The finished jobs' day, ten days ago, kept in a partition of its own.
        database.jdbc().queryForObject(
                "SELECT workrow_add_outcome_day(((now() - interval '10 days') AT TIME ZONE 'UTC')::date)",
                Boolean.class);
        database.rows().setFinishedAtOfQueue("least", java.time.Instant.now().minus(Duration.ofDays(10)));
        assertThat(new RetentionPruner(store, Map.of(JobStatus.COMPLETED, Duration.ofDays(7)), 100).runOnce())
                .as("finished jobs pruned by the role").isPositive();
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_job WHERE queue = 'least' AND status = 'completed'", Long.class))
                .as("no finished job left").isZero();
    }

    @Test
    void aRoleWithoutGrantsOnTheDeadlinesStillEnqueuesWithADeadline() {
        // As between a migration that adds workrow_deadline and the role's grants being run again.
        database.jdbc().execute("REVOKE ALL ON workrow_deadline FROM " + ROLE);
        try {
            SimpleDriverDataSource dml = new SimpleDriverDataSource(new org.postgresql.Driver(), database.jdbcUrl(),
                    ROLE, "");
            JdbcJobQueue queue = new JdbcJobQueue(JobStore.of(dml, SqlIdentifier.of("schema", "public")),
                    JacksonPayloadCodec.withDefaultMapper());
            long id = queue.enqueue(JobRequest.of("least-deadline", Map.of("n", 1))
                    .expiresAt(java.time.Instant.now().plus(Duration.ofHours(1))));
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_deadline WHERE job_id = ?",
                    Integer.class, id)).as("noted by the trigger, as its owner").isEqualTo(1);
        } finally {
            database.jdbc().execute("GRANT SELECT, INSERT, UPDATE, DELETE ON workrow_deadline TO " + ROLE);
        }
    }

    @Test
    void aTemporaryTableCannotStandInForATableThePartitionFunctionsWriteAsTheirOwner() {
        SimpleDriverDataSource dml = new SimpleDriverDataSource(new org.postgresql.Driver(), database.jdbcUrl(), ROLE, "");
        String day = "workrow_outcome_20990102";
        Integer shadowRows = new JdbcTemplate(dml).execute((org.springframework.jdbc.core.ConnectionCallback<Integer>)
                connection -> {
                    try (java.sql.Statement statement = connection.createStatement()) {
                        statement.execute("CREATE TEMPORARY TABLE workrow_outcome_default (LIKE workrow_outcome INCLUDING DEFAULTS)");
                        statement.execute("INSERT INTO workrow_outcome_default (job_id, attempt, queue, status,"
                                + " finished_at) VALUES (1, 1, 'shadow', 'completed', '2099-01-02 12:00+00')");
                        statement.execute("SELECT workrow_add_outcome_day('2099-01-02')");
                        try (java.sql.ResultSet rs = statement.executeQuery(
                                "SELECT count(*) FROM pg_temp.workrow_outcome_default")) {
                            rs.next();
                            return rs.getInt(1);
                        }
                    }
                });
        assertThat(shadowRows).as("the caller's temporary table untouched").isOne();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM public." + day, Integer.class))
                .as("the day created from the schema's own default partition").isZero();
        assertThat(database.jdbc().queryForList("""
                SELECT unnest(proconfig) FROM pg_proc
                WHERE proname IN ('workrow_add_outcome_day', 'workrow_detach_outcome_day', 'workrow_drop_outcome_day',
                                  'workrow_extend_job_data', 'workrow_retire_job_data')
                """, String.class)).hasSize(5).containsOnly("search_path=public, pg_temp");
        database.jdbc().execute("DROP TABLE public." + day);
    }
}

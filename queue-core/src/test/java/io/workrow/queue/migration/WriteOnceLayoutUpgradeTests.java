package io.workrow.queue.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The move to the write-once layout (V13) on a database of version 12's table: every job is
 * in one home afterwards and reads back through the {@code workrow_job} view as it read before,
 * and what a running job, an idempotency key, a saved step and an ordered key stood for survives.
 */
class WriteOnceLayoutUpgradeTests {

    /** The migrations after the last one of the one-row-per-job layout, the move to write-once first. */
    private static final int SINCE_ROW_PER_JOB = Integer.parseInt(WorkrowMigrations.LATEST_VERSION)
            - Integer.parseInt(WorkrowMigrations.ROW_PER_JOB_VERSION);


    @RegisterExtension
    static final WorkrowTestDatabase database = WorkrowTestDatabase.empty();

    /**
     * Columns whose meaning the view keeps, the lease of a running job included. A dead job no
     * longer has a due time, and a waiting job no start time (its last attempt's start is in that
     * attempt's outcome row).
     */
    private static final String COLUMNS = """
            id, queue, partition_key, partition_bucket, priority, idempotency_key, payload::text, headers::text,
            status, CASE WHEN status <> 'dead' THEN run_at END AS run_at, attempts,
            max_attempts, last_error, last_error_at, step, claimed_by, lease_expires_at, lease_token, created_at,
            CASE WHEN status NOT IN ('pending', 'scheduled') THEN started_at END AS started_at,
            finished_at, lease_expiries, fairness_key
            """;

    /** The stats view's columns but its clock's: the two reads run at different times. */
    private static final String STATS = """
            SELECT queue, pending, due, running, completed, dead, cancelled, max_attempts_used, paused, scheduled
            FROM upgraded.workrow_queue_stats ORDER BY queue
            """;

    /**
     * Jobs in every state the version 12 table held them in, as its own statements left them: one
     * per queue named for its state, ids 1 to 9 in this order. A running job holds a lease token
     * of the schema's sequence; a retried one ({@code retried}) waits with its failure recorded and
     * no holder; a job with a partition key has it as its fairness key too, as that version's
     * enqueue wrote it; the last ({@code failed-once}) runs its second attempt after a failure.
     */
    private static final String TODAYS_JOBS = """
            INSERT INTO upgraded.workrow_job (queue, partition_key, partition_bucket, idempotency_key, payload, headers,
                                              status, run_at, attempts, max_attempts, last_error, last_error_at, step,
                                              claimed_by, lease_expires_at, lease_token, started_at, finished_at,
                                              ordered_key, fairness_key)
            SELECT queue, partition_key, partition_bucket, idempotency_key, '{"n":1}', '{"trace":"t"}',
                   status, now() + due_in, attempts, 3, last_error, CASE WHEN last_error IS NOT NULL THEN now() END,
                   step, CASE WHEN attempts > 0 AND status <> 'pending' THEN 'node-a' END,
                   CASE WHEN status = 'running' THEN now() + interval '5 minutes' END,
                   CASE WHEN status = 'running' THEN nextval('upgraded.workrow_lease_token_seq') END,
                   CASE WHEN attempts > 0 THEN now() END,
                   CASE WHEN status IN ('completed', 'dead', 'cancelled') THEN now() END, ordered_key,
                   coalesce(partition_key, '')
            FROM (VALUES
                (1, 'pending', NULL, 0, 'key-pending', 'pending', interval '0', 0, NULL, NULL, NULL),
                (2, 'scheduled', NULL, 0, NULL, 'scheduled', interval '1 hour', 0, NULL, NULL, NULL),
                (3, 'running', NULL, 0, NULL, 'running', interval '0', 1, NULL, 'charged', NULL),
                (4, 'completed', NULL, 0, 'key-done', 'completed', interval '0', 1, NULL, 'sent', NULL),
                (5, 'retried', NULL, 0, NULL, 'pending', interval '0', 1, 'boom: first', NULL, NULL),
                (6, 'dead', NULL, 0, NULL, 'dead', interval '0', 1, 'poison: bad payload', 'half-way', NULL),
                (7, 'cancelled', NULL, 0, NULL, 'cancelled', interval '0', 0, NULL, NULL, NULL),
                (8, 'ordered', 'customer-7', 5, NULL, 'running', interval '0', 1, NULL, NULL, 'customer-7'),
                (9, 'failed-once', NULL, 0, NULL, 'running', interval '0', 2, 'boom: before', NULL, NULL)
            ) AS job(n, queue, partition_key, partition_bucket, idempotency_key, status, due_in, attempts,
                     last_error, step, ordered_key)
            ORDER BY n
            """;

    private static long token(long id) {
        return database.jdbc().queryForObject("SELECT lease_token FROM upgraded.workrow_job WHERE id = ?", Long.class, id);
    }

    @Test
    void everyJobOfTodaysTableReadsTheSameThroughTheViewAfterTheUpgrade() {
        new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "upgraded"))
                .upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
        database.jdbc().update(TODAYS_JOBS);
        long running = token(3);
        long ordered = token(8);
        long runningAgain = token(9);

        List<Map<String, Object>> before = database.jdbc().queryForList(
                "SELECT " + COLUMNS + " FROM upgraded.workrow_job ORDER BY id");
        List<Map<String, Object>> statsBefore = database.jdbc().queryForList(STATS);
        long nextIdBefore = database.jdbc().queryForObject(
                "SELECT last_value FROM upgraded.workrow_job_id_seq", Long.class);

        assertThat(new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "upgraded")).migrate())
                .isEqualTo(SINCE_ROW_PER_JOB);

        List<Map<String, Object>> after = database.jdbc().queryForList(
                "SELECT " + COLUMNS + " FROM upgraded.workrow_job ORDER BY id");
        assertThat(after).hasSameSizeAs(before);
        for (int i = 0; i < before.size(); i++) {
            assertThat(after.get(i)).as("every column of the %s job, as before", before.get(i).get("queue"))
                    .containsExactlyInAnyOrderEntriesOf(before.get(i));
        }
        assertThat(database.jdbc().queryForList(STATS))
                .isEqualTo(statsBefore);
        assertThat(database.jdbc().queryForList("""
                SELECT 'ready:' || id FROM upgraded.workrow_ready UNION ALL
                SELECT 'scheduled:' || id FROM upgraded.workrow_scheduled UNION ALL
                SELECT 'claim:' || token || ':' || array_to_string(ids, ',') FROM upgraded.workrow_claim UNION ALL
                SELECT 'dead:' || id FROM upgraded.workrow_dead UNION ALL
                SELECT status || ':' || job_id FROM upgraded.workrow_outcome
                ORDER BY 1
                """, String.class)).as("one home per job, and the failures of jobs not finished in the log")
                .containsExactlyInAnyOrder(
                "ready:1", "ready:5", "scheduled:2", "claim:" + running + ":3",
                "claim:" + ordered + ":8", "claim:" + runningAgain + ":9", "completed:4",
                "dead:6", "cancelled:7", "failed:9", "failed:5");
        assertThat(database.jdbc().queryForList(
                "SELECT queue || '/' || idempotency_key || '=' || job_id FROM upgraded.workrow_job_key ORDER BY 1",
                String.class)).as("a key still names its job, so an idempotent enqueue does not run it again")
                .containsExactly("completed/key-done=4", "pending/key-pending=1");
        assertThat(database.jdbc().queryForList(
                "SELECT queue || '/' || ordered_key || '=' || job_id || '@' || claim_token FROM upgraded.workrow_key_running",
                String.class)).containsExactly("ordered/customer-7=8@" + ordered);
        assertThat(database.jdbc().queryForObject(
                "SELECT has_steps FROM upgraded.workrow_claim WHERE token = ?", Boolean.class, running))
                .isTrue();

        long nextId = database.jdbc().queryForObject(
                "INSERT INTO upgraded.workrow_job_data (queue, partition_bucket, payload, max_attempts)"
                        + " VALUES ('new', 0, '{}', 3) RETURNING id", Long.class);
        assertThat(nextId).as("ids continue after the old table's").isEqualTo(nextIdBefore + 1);
        assertThat(database.jdbc().queryForObject(
                "SELECT tableoid::regclass::text FROM upgraded.workrow_job_data WHERE id = 1", String.class))
                .as("the old rows were attached, not copied").isEqualTo("upgraded.workrow_job_data_initial");
    }

    @Test
    void theMoveRefusesToStartWhileANodeOfTheOldVersionStillHoldsJobs() {
        SqlIdentifier schema = SqlIdentifier.of("schema", "guarded");
        new WorkrowMigrations(database.dataSource(), schema).upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
        database.jdbc().update("INSERT INTO guarded.workrow_lease_holder (worker, renewed_until, tokens)"
                + " VALUES ('vm:41:old', now() + interval '1 minute', '{7}')");

        assertThatThrownBy(() -> new WorkrowMigrations(database.dataSource(), schema).migrate())
                .hasMessageContaining("Workrow vm:41:old still holds jobs")
                .hasMessageContaining("stop every Workrow node before migrating to version 13");
        assertThat(database.jdbc().queryForObject("SELECT to_regclass('guarded.workrow_claim') IS NULL",
                Boolean.class)).as("nothing of the move was left").isTrue();

        database.jdbc().update("UPDATE guarded.workrow_lease_holder SET renewed_until = now() - interval '1 second'");
        assertThat(new WorkrowMigrations(database.dataSource(), schema).migrate()).as("once its vouch ran out")
                .isEqualTo(SINCE_ROW_PER_JOB);
    }
}

package io.workrow.queue.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobFailure;
import io.workrow.queue.store.RowPerJobStore;
import io.workrow.queue.store.NewJob;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The move to the write-once layout (V13) on a database that today's engine filled: every job is
 * in one home afterwards and reads back through the {@code workrow_job} view as it read before,
 * and what a running job, an idempotency key, a saved step and an ordered key stood for survives.
 */
class WriteOnceLayoutUpgradeTests {

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

    private static NewJob job(String queue, String key, long delayMillis) {
        return new NewJob(queue, null, 3, 0, key, "{\"n\":1}", "{\"trace\":\"t\"}", null, delayMillis, 3);
    }

    private static ClaimedJob claimOne(RowPerJobStore store, String queue) {
        return store.claim(queue, "node-a", 1, Duration.ofMinutes(5)).get(0);
    }

    @Test
    void everyJobOfTodaysTableReadsTheSameThroughTheViewAfterTheUpgrade() {
        new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "upgraded"))
                .upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
        RowPerJobStore store = new RowPerJobStore(database.dataSource(), SqlIdentifier.of("schema", "upgraded"));

        store.insertOne(job("pending", "key-pending", 0));
        store.insertOne(job("scheduled", null, 3_600_000));
        store.insertOne(job("running", null, 0));
        ClaimedJob running = claimOne(store, "running");
        store.saveStep(new HeldJob(running.id(), running.leaseToken()), "charged");
        store.insertOne(job("completed", "key-done", 0));
        ClaimedJob completed = claimOne(store, "completed");
        store.saveStep(new HeldJob(completed.id(), completed.leaseToken()), "sent");
        store.completeMany(List.of(new HeldJob(completed.id(), completed.leaseToken())));
        store.insertOne(job("retried", null, 0));
        ClaimedJob retried = claimOne(store, "retried");
        store.failMany(List.of(new JobFailure(retried.id(), retried.leaseToken(), "boom: first", Duration.ZERO, false)));
        store.insertOne(job("dead", null, 0));
        ClaimedJob dead = claimOne(store, "dead");
        store.saveStep(new HeldJob(dead.id(), dead.leaseToken()), "half-way");
        store.failMany(List.of(new JobFailure(dead.id(), dead.leaseToken(), "poison: bad payload", Duration.ZERO, true)));
        long cancelled = store.insertOne(job("cancelled", null, 0));
        store.cancel("cancelled", cancelled);
        store.insertOne(new NewJob("ordered", "customer-7", 5, 0, null, "{}", "{}", null, 0, 3));
        ClaimedJob ordered = store.claimOrdered("ordered", "node-a", 1, Duration.ofMinutes(5), false,
                java.util.stream.IntStream.range(0, 1024).toArray(), false).get(0);

        store.insertOne(job("failed-once", null, 0));
        ClaimedJob failedOnce = claimOne(store, "failed-once");
        store.failMany(List.of(new JobFailure(failedOnce.id(), failedOnce.leaseToken(), "boom: before", Duration.ZERO,
                false)));
        ClaimedJob runningAgain = claimOne(store, "failed-once");

        List<Map<String, Object>> before = database.jdbc().queryForList(
                "SELECT " + COLUMNS + " FROM upgraded.workrow_job ORDER BY id");
        List<Map<String, Object>> statsBefore = database.jdbc().queryForList(STATS);
        long nextIdBefore = database.jdbc().queryForObject(
                "SELECT last_value FROM upgraded.workrow_job_id_seq", Long.class);

        assertThat(new WorkrowMigrations(database.dataSource(), SqlIdentifier.of("schema", "upgraded")).migrate())
                .isEqualTo(1);

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
                "ready:1", "ready:5", "scheduled:2", "claim:" + running.leaseToken() + ":3",
                "claim:" + ordered.leaseToken() + ":8", "claim:" + runningAgain.leaseToken() + ":9", "completed:4",
                "dead:6", "cancelled:7", "failed:9", "failed:5");
        assertThat(database.jdbc().queryForList(
                "SELECT queue || '/' || idempotency_key || '=' || job_id FROM upgraded.workrow_job_key ORDER BY 1",
                String.class)).as("a key still names its job, so an idempotent enqueue does not run it again")
                .containsExactly("completed/key-done=4", "pending/key-pending=1");
        assertThat(database.jdbc().queryForList(
                "SELECT queue || '/' || ordered_key || '=' || job_id || '@' || claim_token FROM upgraded.workrow_key_running",
                String.class)).containsExactly("ordered/customer-7=8@" + ordered.leaseToken());
        assertThat(database.jdbc().queryForObject(
                "SELECT has_steps FROM upgraded.workrow_claim WHERE token = ?", Boolean.class, running.leaseToken()))
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
        assertThat(new WorkrowMigrations(database.dataSource(), schema).migrate()).as("once its vouch ran out").isOne();
    }
}

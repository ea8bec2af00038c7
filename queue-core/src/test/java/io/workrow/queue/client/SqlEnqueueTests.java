package io.workrow.queue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.DrainedJob;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataIntegrityViolationException;

/**
 * {@code workrow_enqueue}, the SQL function a trigger, a psql session or another language's service
 * enqueues with: JobQueue's rules (the queue name's rule, a payload required, idempotency keys,
 * the queue's declared attempts, the partition bucket, ready or scheduled by the due time, a
 * wake-up at commit), in the caller's transaction.
 */
class SqlEnqueueTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private WorkerRuntime runtime;

    record Receipt(String customer, int amountCents) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_queue_rule");
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.stop();
        }
    }

    private long enqueue(String sql, Object... args) {
        return database.jdbc().queryForObject(sql, Long.class, args);
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT queue, status, priority, partition_key, partition_bucket,"
                + " idempotency_key, payload::text AS payload, max_attempts, fairness_key FROM workrow_job WHERE id = ?",
                id);
    }

    @Test
    void aJobEnqueuedFromSqlRunsThroughItsHandlerWithItsPayloadRead() {
        long id = enqueue("SELECT workrow_enqueue('send-receipt', '{\"customer\": \"ada\", \"amountCents\": 1200}')");
        List<Receipt> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("send-receipt", Receipt.class, (receipt, job) -> seen.add(receipt), QueueOptions.defaults())
                .build();

        List<DrainedJob> runs = runtime.drain("send-receipt");

        assertThat(runs).singleElement().satisfies(run -> {
            assertThat(run.id()).isEqualTo(id);
            assertThat(run.succeeded()).isTrue();
        });
        assertThat(seen).containsExactly(new Receipt("ada", 1200));
        assertThat(row(id)).containsEntry("status", "completed").containsEntry("max_attempts", 5)
                .containsEntry("priority", 0).containsEntry("fairness_key", "");
    }

    @Test
    void namedArgumentsSetPriorityKeysAndTheDueTime() {
        long id = enqueue("SELECT workrow_enqueue('sync', '{}', priority => -3, partition_key => 'tenant:7',"
                + " idempotency_key => 'sync-7')");
        long later = enqueue("SELECT workrow_enqueue('sync', '{}', run_at => now() + interval '1 hour')");
        long past = enqueue("SELECT workrow_enqueue('sync', '{}', now() - interval '1 day')");
        long clock = enqueue("SELECT workrow_enqueue('sync', '{}', clock_timestamp())");

        assertThat(row(id)).containsEntry("status", "pending").containsEntry("priority", -3)
                .containsEntry("partition_key", "tenant:7").containsEntry("fairness_key", "tenant:7")
                .containsEntry("idempotency_key", "sync-7")
                .containsEntry("partition_bucket", PartitionBuckets.of("tenant:7"));
        assertThat(row(later)).containsEntry("status", "scheduled");
        assertThat(row(past)).containsEntry("status", "pending");
        assertThat(row(clock)).as("due now by the function's own clock: ready, not scheduled")
                .containsEntry("status", "pending");
    }

    @Test
    void theBucketOfAPartitionKeyIsTheJavaProducersForAnyKey() {
        List<String> keys = List.of("", "a", "order:9182", "tenant-\u00e9\u00e8", "\u65e5\u672c\u8a9e", "\ud83d\ude80 rocket",
                "x".repeat(500));
        for (String key : keys) {
            assertThat(database.jdbc().queryForObject("SELECT workrow_partition_bucket(?)", Integer.class, key))
                    .as("bucket of %s", key).isEqualTo(PartitionBuckets.of(key));
        }
    }

    @Test
    void anIdempotencyKeyReturnsTheJobThatHasItAndWritesNothingElse() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        long fromJava = jobQueue.enqueue(io.workrow.queue.JobRequest.of("sync", Map.of("n", 1)).idempotencyKey("k-1"));

        long fromSql = enqueue("SELECT workrow_enqueue('sync', '{\"n\": 2}', idempotency_key => 'k-1')");
        long again = enqueue("SELECT workrow_enqueue('sync', '{\"n\": 3}', idempotency_key => 'k-2')");
        long twice = enqueue("SELECT workrow_enqueue('sync', '{\"n\": 4}', idempotency_key => 'k-2')");

        assertThat(fromSql).isEqualTo(fromJava);
        assertThat(twice).isEqualTo(again);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isEqualTo(2);
        assertThat(row(again)).containsEntry("payload", "{\"n\": 3}");
    }

    @Test
    void concurrentEnqueuesOfOneKeyWaitForEachOtherAndShareOneJob() throws Exception {
        try (Connection first = database.dataSource().getConnection();
                Connection second = database.dataSource().getConnection()) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            long firstId = call(first, "shared");
            // The second waits on the first's uncommitted key, then takes its job.
            CompletableFuture<Long> secondId = CompletableFuture.supplyAsync(() -> {
                try {
                    return call(second, "shared");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300);
            assertThat(secondId).as("waits for the first transaction").isNotDone();
            first.commit();
            assertThat(secondId.get(10, TimeUnit.SECONDS)).isEqualTo(firstId);
            second.commit();

            // A key whose first transaction rolls back is free for the one that waited.
            long rolledBack = call(first, "undone");
            CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
                try {
                    return call(second, "undone");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300);
            first.rollback();
            long kept = waited.get(10, TimeUnit.SECONDS);
            second.commit();
            assertThat(kept).isNotEqualTo(rolledBack);
            assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job ORDER BY id", Long.class))
                    .containsExactly(firstId, kept);
        }
    }

    private static long call(Connection connection, String key) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT workrow_enqueue('sync', ?::jsonb, idempotency_key => ?)")) {
            statement.setString(1, "{\"key\": \"" + key + "\"}");
            statement.setString(2, key);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void aRolledBackEnqueueLeavesNothing() {
        database.jdbc().execute("BEGIN; SELECT workrow_enqueue('sync', '{}', idempotency_key => 'gone'); ROLLBACK");

        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isZero();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job_key", Integer.class)).isZero();
    }

    @Test
    void badInputIsRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> enqueue("SELECT workrow_enqueue('Send Receipt', '{}')"))
                .isInstanceOf(DataIntegrityViolationException.class)
                .hasMessageContaining("Queue name 'Send Receipt' is invalid");
        assertThatThrownBy(() -> enqueue("SELECT workrow_enqueue(NULL, '{}')"))
                .hasMessageContaining("Queue name '<NULL>' is invalid");
        assertThatThrownBy(() -> enqueue("SELECT workrow_enqueue('sync', NULL)"))
                .hasMessageContaining("payload must not be null");
        assertThatThrownBy(() -> enqueue("SELECT workrow_enqueue('sync', '{}', priority => 40000)"))
                .hasMessageContaining("priority must be between -32768 and 32767, was 40000");
        assertThatThrownBy(() -> enqueue("SELECT workrow_enqueue('sync', 'not json')"))
                .hasMessageContaining("invalid input syntax for type json");
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isZero();
    }

    @Test
    void aJobGetsTheAttemptsItsQueuesRuntimesDeclared() {
        long before = enqueue("SELECT workrow_enqueue('sync', '{}')");
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("sync", Object.class, (payload, job) -> { }, QueueOptions.defaults().withMaxAttempts(9))
                .build();
        runtime.start();
        runtime.stop();

        long after = enqueue("SELECT workrow_enqueue('sync', '{}', run_at => now() + interval '1 hour')");
        long otherQueue = enqueue("SELECT workrow_enqueue('other', '{}', run_at => now() + interval '1 hour')");

        assertThat(row(before)).as("no runtime had declared the queue").containsEntry("max_attempts", 5);
        assertThat(row(after)).containsEntry("max_attempts", 9);
        assertThat(row(otherQueue)).containsEntry("max_attempts", 5);
    }

    @Test
    void anIdleRuntimeWakesForAJobEnqueuedFromSqlAtItsCommit() {
        Set<Long> handled = ConcurrentHashMap.newKeySet();
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .pollInterval(Duration.ofSeconds(30))
                .handler("sync", Object.class, (payload, job) -> handled.add(job.id()), QueueOptions.defaults())
                .build();
        runtime.start();
        await().atMost(Duration.ofSeconds(10)).until(runtime::isListenerConnected);
        long warmUp = enqueue("SELECT workrow_enqueue('sync', '{}')");
        await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains(warmUp));

        // The poller now waits out its 30 s interval: only the commit's notification wakes it.
        long id = enqueue("SELECT workrow_enqueue('sync', '{}', clock_timestamp())");

        await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains(id));
    }
}

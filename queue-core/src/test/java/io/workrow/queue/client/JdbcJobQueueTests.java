package io.workrow.queue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

class JdbcJobQueueTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JobQueue jobQueue;
    private TransactionTemplate transaction;

    record Receipt(long orderId, String email) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper(), queue -> 7, 1024);
        transaction = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
    }

    private int jobCount() {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class);
    }

    @Test
    void concurrentEnqueueAllSharingIdempotencyKeysInOppositeOrdersNeverDeadlock() throws Exception {
        int keys = 200;
        for (int round = 0; round < 10; round++) {
            List<JobRequest> forward = new ArrayList<>();
            for (int i = 0; i < keys; i++) {
                forward.add(JobRequest.of("send-receipt", new Receipt(i, "a@example.com"))
                        .idempotencyKey("round-" + round + "-key-" + i));
            }
            // Unkeyed jobs among them, whose ids must still follow input order.
            forward.add(keys / 2, JobRequest.of("send-receipt", new Receipt(-1, "first@example.com")));
            forward.add(JobRequest.of("send-receipt", new Receipt(-2, "second@example.com")));
            List<JobRequest> backward = new ArrayList<>(forward);
            Collections.reverse(backward);
            CyclicBarrier start = new CyclicBarrier(2);
            ExecutorService producers = Executors.newFixedThreadPool(2);
            try {
                Future<List<Long>> first = producers.submit(() -> enqueueAllAfter(start, forward));
                Future<List<Long>> second = producers.submit(() -> enqueueAllAfter(start, backward));
                List<Long> firstIds = first.get(60, TimeUnit.SECONDS);
                List<Long> secondIds = second.get(60, TimeUnit.SECONDS);
                for (int i = 0; i < forward.size(); i++) {
                    if (forward.get(i).idempotencyKey() != null) {
                        assertThat(secondIds.get(forward.size() - 1 - i)).as("one job per key").isEqualTo(firstIds.get(i));
                    }
                }
                assertThat(firstIds.get(keys / 2)).as("unkeyed jobs in input order").isLessThan(firstIds.get(keys + 1));
            } finally {
                producers.shutdownNow();
            }
        }
        // Per round: one job per key, and each producer's two unkeyed jobs.
        assertThat(jobCount()).isEqualTo(10 * (keys + 4));
    }

    /** One enqueueAll in a transaction that commits a moment later, as a request handler's would. */
    private List<Long> enqueueAllAfter(CyclicBarrier start, List<JobRequest> requests)
            throws Exception {
        start.await();
        return transaction.execute(status -> {
            List<Long> ids = jobQueue.enqueueAll(requests);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ids;
        });
    }

    @Test
    void enqueueInATransactionThatRollsBackLeavesNoRow() {
        transaction.executeWithoutResult(status -> {
            jobQueue.enqueue("send-receipt", new Receipt(1, "a@example.com"));
            assertThat(jobCount()).isEqualTo(1);
            status.setRollbackOnly();
        });
        assertThat(jobCount()).isZero();
    }

    @Test
    void enqueueInATransactionThatCommitsLeavesOneRow() {
        long id = transaction.execute(status -> jobQueue.enqueue("send-receipt", new Receipt(1, "a@example.com")));
        Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
        assertThat(jobCount()).isEqualTo(1);
        assertThat(row.get("status")).isEqualTo("pending");
        assertThat(row.get("max_attempts")).isEqualTo(7);
        assertThat(database.jdbc().queryForObject("SELECT payload->>'orderId' FROM workrow_job WHERE id = ?",
                String.class, id)).isEqualTo("1");
        assertThat(row.get("payload").toString()).doesNotContain("class");
    }

    @Test
    void sixteenThreadsEnqueueingOneIdempotencyKeyMakeOneRowAndAllGetItsId() throws Exception {
        int threads = 16;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Long>> ids = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            long orderId = i;
            ids.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                return transaction.execute(status -> jobQueue.enqueue(
                        JobRequest.of("send-receipt", new Receipt(orderId, "x@example.com"))
                                .idempotencyKey("receipt-9182-v1")));
            }));
        }
        ready.await();
        go.countDown();
        List<Long> results = new ArrayList<>();
        for (Future<Long> id : ids) {
            results.add(id.get());
        }
        pool.shutdown();

        assertThat(jobCount()).isEqualTo(1);
        long only = database.jdbc().queryForObject("SELECT id FROM workrow_job", Long.class);
        assertThat(results).containsOnly(only).hasSize(threads);
    }

    @Test
    void aSingleEnqueueWritesTheRowEnqueueAllWouldWrite() {
        Instant at = Instant.now().plus(Duration.ofHours(2)).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        List<JobRequest> requests = List.of(
                JobRequest.of("a", new Receipt(1, "a")).partitionKey("order:1").priority(3).maxAttempts(2),
                JobRequest.of("b", new Receipt(2, "b")).runAt(at).fairnessKey("tenant-7"),
                JobRequest.of("c", new Receipt(3, "c")).delay(Duration.ofMinutes(30)).idempotencyKey("k-1"));
        // A keyless job's bucket is drawn at random; a keyed one's follows from its key.
        String columns = "queue, partition_key, CASE WHEN partition_key IS NULL THEN -1 ELSE partition_bucket END"
                + " AS partition_bucket, priority, idempotency_key, payload, headers,"
                + " status, max_attempts, fairness_key, run_at = created_at AS due_now,"
                + " date_trunc('second', run_at - created_at) AS wait";
        for (JobRequest request : requests) {
            long one = jobQueue.enqueue(request);
            if (request.idempotencyKey() != null) {
                database.rows().setIdempotencyKey(one, request.idempotencyKey() + "-one");
            }
            long many = jobQueue.enqueueAll(List.of(request)).get(0);
            Map<String, Object> single = database.jdbc().queryForMap("SELECT " + columns + " FROM workrow_job WHERE id = ?", one);
            Map<String, Object> batch = database.jdbc().queryForMap("SELECT " + columns + " FROM workrow_job WHERE id = ?", many);
            if (request.idempotencyKey() != null) {
                assertThat(single.remove("idempotency_key")).isEqualTo(request.idempotencyKey() + "-one");
                assertThat(batch.remove("idempotency_key")).isEqualTo(request.idempotencyKey());
            }
            assertThat(single).isEqualTo(batch);
        }
        assertThat(database.jdbc().queryForObject("SELECT run_at FROM workrow_job WHERE queue = 'b' LIMIT 1",
                java.sql.Timestamp.class).toInstant()).isEqualTo(at);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'scheduled'",
                Integer.class)).isEqualTo(4);
    }

    @Test
    void enqueueAllReturnsIdsInOrderAndHonoursEachRequest() {
        List<Long> ids = jobQueue.enqueueAll(List.of(
                JobRequest.of("a", new Receipt(1, "a")).partitionKey("order:1").priority(3).maxAttempts(2),
                JobRequest.of("b", new Receipt(2, "b")).delay(Duration.ofHours(1)),
                JobRequest.of("a", new Receipt(3, "c")).idempotencyKey("k")));
        assertThat(ids).hasSize(3);
        Map<String, Object> first = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", ids.get(0));
        assertThat(first.get("partition_key")).isEqualTo("order:1");
        assertThat(((Number) first.get("partition_bucket")).intValue()).isEqualTo(PartitionBuckets.of("order:1"));
        assertThat(((Number) first.get("priority")).intValue()).isEqualTo(3);
        assertThat(first.get("max_attempts")).isEqualTo(2);
        assertThat(database.jdbc().queryForObject("SELECT run_at > now() + interval '59 minutes' FROM workrow_job"
                + " WHERE id = ?", Boolean.class, ids.get(1))).isTrue();
        assertThat(database.jdbc().queryForObject("SELECT payload->>'orderId' FROM workrow_job WHERE id = ?",
                String.class, ids.get(2))).isEqualTo("3");
    }

    @Test
    void aBatchWithoutIdempotencyKeysReturnsEachJobsOwnIdInInputOrder() {
        List<JobRequest> requests = new ArrayList<>();
        for (int n = 0; n < 300; n++) {
            requests.add(JobRequest.of(n % 2 == 0 ? "a" : "b", new Receipt(n, "r" + n)).priority(n % 3));
        }
        List<Long> ids = jobQueue.enqueueAll(requests);
        for (int n = 0; n < requests.size(); n++) {
            assertThat(database.jdbc().queryForObject("SELECT (payload->>'orderId')::int FROM workrow_job WHERE id = ?",
                    Integer.class, ids.get(n))).isEqualTo(n);
        }
    }

    @Test
    void payloadOverTheLimitIsRejectedNamingTheSetting() {
        String big = "x".repeat(2000);
        assertThatThrownBy(() -> jobQueue.enqueue("a", new Receipt(1, big)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workrow.max-payload-size")
                .hasMessageContaining("over the limit of 1024");
        assertThat(jobCount()).isZero();
    }

    @Test
    void invalidQueueNameIsRejectedBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> jobQueue.enqueueAll(List.of(
                JobRequest.of("fine", new Receipt(1, "a")), JobRequest.of("Not Valid", new Receipt(2, "b")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'Not Valid'");
        assertThat(jobCount()).isZero();
    }
}

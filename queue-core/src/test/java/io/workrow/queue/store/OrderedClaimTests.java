package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The ordered claim statement itself: heads only, what holds a key, the race no snapshot sees, its cost. */
class OrderedClaimTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final int[] ALL = IntStream.range(0, 1024).toArray();

    private final JobStore store = database.store();
    private final ClaimStore claims = store.claims();

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    private static NewJob job(String key) {
        return new NewJob("ledger", key, key == null ? 0 : io.workrow.queue.client.PartitionBuckets.of(key), 0, null,
                "{}", "{}", null, 0, 5);
    }

    private List<ClaimedPosition> claimPositions(boolean skipFailed) {
        return claims.claimOrdered("ledger", "w", 16, Duration.ofMinutes(1), false, ALL, skipFailed);
    }

    private List<Long> claim(boolean skipFailed) {
        return claimPositions(skipFailed).stream().map(ClaimedPosition::id).toList();
    }

    private void end(PositionEnd end) {
        assertThat(claims.endMany(List.of(end)).get(end).counted()).isTrue();
    }

    @Test
    void onlyTheOldestPendingJobOfEachKeyIsClaimedAndOnlyWhileNoneOfItsKeyRuns() {
        List<Long> ids = store.insertMany(List.of(job("a"), job("a"), job("b"), job(null), job(null)));
        List<ClaimedPosition> heads = claimPositions(false);
        assertThat(heads).extracting(ClaimedPosition::id)
                .containsExactlyInAnyOrder(ids.get(0), ids.get(2), ids.get(3), ids.get(4));
        assertThat(claim(false)).as("a and b each have a running job").isEmpty();
        end(PositionEnd.completed(heads.stream().filter(job -> job.id() == ids.get(0)).findFirst().orElseThrow()));
        assertThat(claim(false)).containsExactly(ids.get(1));
    }

    @Test
    void aScheduledRetryHoldsItsKeyWithBlockAndNotWithSkip() {
        List<Long> ids = store.insertMany(List.of(job("a"), job("a")));
        List<ClaimedPosition> head = claimPositions(false);
        assertThat(head).extracting(ClaimedPosition::id).containsExactly(ids.get(0));
        end(PositionEnd.failed(head.get(0), "boom", Duration.ofHours(1)));
        assertThat(claim(false)).as("block: the failed job waits an hour, and so does its key").isEmpty();
        assertThat(claim(true)).as("skip: the key goes on").containsExactly(ids.get(1));
    }

    @Test
    void aBucketThisWorkerDoesNotOwnIsLeftToItsOwner() {
        List<Long> ids = store.insertMany(List.of(job("a"), job(null)));
        int bucketOfA = io.workrow.queue.client.PartitionBuckets.of("a");
        int[] allButA = IntStream.range(0, 1024).filter(b -> b != bucketOfA).toArray();
        assertThat(claims.claimOrdered("ledger", "w", 16, Duration.ofMinutes(1), false, allButA, false))
                .extracting(ClaimedPosition::id).as("keyless jobs belong to no bucket").containsExactly(ids.get(1));
    }

    /**
     * Two claims whose snapshots each miss the other's job: a producer commits the key's older job
     * after a newer one was claimed. The unique index on running ordered keys refuses the second.
     */
    @Test
    void twoClaimsThatCannotSeeEachOtherNeverRunTwoJobsOfOneKey() throws Exception {
        NamedStatement claim = NamedStatement.parse(orderedClaimStatement());
        try (Connection producer = database.dataSource().getConnection();
                Connection claimerA = database.dataSource().getConnection()) {
            producer.setAutoCommit(false);
            long older = JobStore.of(new org.springframework.jdbc.datasource.SingleConnectionDataSource(producer, true),
                    database.schema()).insertOne(job("k"));
            long newer = store.insertMany(List.of(job("k"))).get(0);

            claimerA.setAutoCommit(false);
            List<Long> claimedByA = new ArrayList<>();
            try (PreparedStatement statement = claim.bind(values()).createPreparedStatement(claimerA);
                    ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    claimedByA.add(rs.getLong("id"));
                }
            }
            assertThat(claimedByA).as("the older job is not committed yet").containsExactly(newer);
            producer.commit();

            // B sees the older job as the key's head and nothing running (A has not committed).
            CompletableFuture<List<Long>> claimedByB = CompletableFuture.supplyAsync(() -> claim(false));
            // B locks the older job and waits on A's uncommitted entry in the running-key index.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> database.jdbc()
                    .queryForObject("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                            + " AND wait_event = 'transactionid' AND query LIKE '%WITH RECURSIVE walk%'", Integer.class) == 1);
            claimerA.commit();
            assertThat(claimedByB.get(10, TimeUnit.SECONDS)).as("refused by the index, then nothing is a head").isEmpty();
            assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job WHERE status = 'running'", Long.class))
                    .containsExactly(newer);
            assertThat(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, older))
                    .isEqualTo("pending");
        }
    }

    @Test
    void aHotKeyWhoseHeadRunsDoesNotMakeClaimsWalkItsBacklog() throws Exception {
        // 100,000 jobs of one key, enqueued first, its head running; 1,000 other keys with 10 jobs each.
        enqueue(IntStream.range(0, 100_000).mapToObj(i -> new NewJob("ledger", "hot", 7, 0, null, "{}", "{}", null, 0, 5)));
        enqueue(IntStream.range(1, 10_001).mapToObj(i -> new NewJob("ledger", "key-" + (i % 1000), (i % 1000) % 1024, 0,
                null, "{}", "{}", null, 0, 5)));
        assertThat(claims.claimOrdered("ledger", "w", 1, Duration.ofMinutes(1), false, new int[] {7}, false)).hasSize(1);

        int buffers = orderedClaimBuffers();
        System.out.printf("ordered claim of 16 behind a running hot key with 100,000 jobs: %d buffers%n", buffers);
        assertThat(buffers).as("a walk of the hot key's 100,000 rows reads about 2,000").isLessThan(1_000);
    }

    /**
     * The limit docs/patterns.md names: when every key is held, the fallback visits each key's head
     * before it gives up. Measured so the figure quoted there comes from a command.
     */
    @Test
    void whenEveryKeyIsHeldAClaimVisitsEachKeyOnceAndClaimsNothing() throws Exception {
        enqueue(IntStream.range(0, 40_000).mapToObj(i -> new NewJob("ledger", "key-" + (i % 20_000),
                (i % 20_000) % 1024, 0, null, "{}", "{}", null, 0, 5)));
        // Another node runs every key's head.
        int held = 0;
        for (int taken = -1; taken != 0; held += taken) {
            taken = claims.claimOrdered("ledger", "elsewhere", 2_000, Duration.ofHours(1), false, ALL, false).size();
        }
        assertThat(held).isEqualTo(20_000);
        database.jdbc().execute("ANALYZE");

        int buffers = orderedClaimBuffers();
        System.out.printf("ordered claim of 16 with all 20,000 keys held: %d buffers (%.1f per key)%n", buffers,
                buffers / 20_000.0);
        assertThat(claim(false)).isEmpty();
        assertThat(buffers).as("a head probe per key, not a walk of the rows").isBetween(20_000, 200_000);
    }

    private int orderedClaimBuffers() throws Exception {
        return ClaimCost.buffers(database, "JOB_CLAIM_ORDERED", values());
    }

    /** The ordered claim statement, rendered. */
    private static String orderedClaimStatement() {
        return JobSql.render(JobSql.JOB_CLAIM_ORDERED, database.schema());
    }

    private void enqueue(java.util.stream.Stream<NewJob> jobs) {
        List<NewJob> batch = new ArrayList<>();
        jobs.forEach(job -> {
            batch.add(job);
            if (batch.size() == 10_000) {
                store.insertMany(batch);
                batch.clear();
            }
        });
        store.insertMany(batch);
        database.jdbc().execute("ANALYZE");
    }

    private static Map<String, Object> values() {
        Map<String, Object> values = new HashMap<>();
        values.put("queue", "ledger");
        values.put("worker", "a");
        values.put("limit", 16);
        values.put("lease_ms", 60_000L);
        values.put("probes", false);
        values.put("buckets", ALL);
        values.put("skip_failed", false);
        values.put("walk", 64);
        return values;
    }

}

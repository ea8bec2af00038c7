package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.workrow.queue.FairnessSetting;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fair claim statements themselves: who gets the starts, rates under concurrent claimers, the
 * key that arrives late, what a claim costs at 1,000 keys. Keys here are partition keys (the
 * fairness key by default); jobs without one form the group {@code ""}.
 */
class FairClaimTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final Duration LEASE = Duration.ofMinutes(5);

    private final JobStore store = database.store();
    private final ClaimStore claims = store.claims();
    private final JdbcQueueAdmin admin = new JdbcQueueAdmin(store);

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    private void enqueue(String key, int jobs) {
        List<NewJob> batch = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            batch.add(new NewJob("reports", key, 0, 0, null, "{}", "{}", null, 0, 5));
        }
        store.insertMany(batch);
    }

    private static String keyOf(ClaimedPosition job) {
        return Objects.requireNonNullElse(job.partitionKey(), "");
    }

    private Map<String, Long> byKey(List<ClaimedPosition> jobs) {
        return jobs.stream().collect(Collectors.groupingBy(FairClaimTests::keyOf, Collectors.counting()));
    }

    @Test
    void weightedClaimsTakeTheKeysInTurnEvenOneJobAtATime() {
        enqueue("a", 20);
        enqueue("b", 5);
        enqueue(null, 2);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            keys.add(keyOf(claims.claimWeighted("reports", "w", 1, LEASE, false).get(0)));
        }
        assertThat(keys).as("a's jobs are older, yet every key gets its turn").containsExactly("a", "b", "", "a", "b", "");
    }

    @Test
    void weightsSetAtRunTimeShareTheStartsAndClearingThemRestoresEqualShares() {
        enqueue("a", 400);
        enqueue("b", 400);
        admin.setFairness("reports", "a", 3.0, null);
        List<ClaimedPosition> claimed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            claimed.addAll(claims.claimWeighted("reports", "w", 16, LEASE, false));
        }
        assertThat(byKey(claimed)).as("weight 3 against 1 over 160 starts")
                .containsEntry("a", 120L).containsEntry("b", 40L);

        assertThat(admin.clearFairness("reports", "a")).isTrue();
        claimed.clear();
        for (int i = 0; i < 10; i++) {
            claimed.addAll(claims.claimWeighted("reports", "w", 16, LEASE, false));
        }
        Map<String, Long> equal = byKey(claimed);
        assertThat(equal.get("a")).as("equal weights again: %s", equal).isBetween(76L, 84L);
        assertThat(equal.get("b")).isBetween(76L, 84L);
    }

    @Test
    void aKeyThatArrivesLateJoinsLevelWithTheOthersInsteadOfTakingTheQueue() {
        enqueue("a", 300);
        for (int i = 0; i < 10; i++) {
            claims.claimWeighted("reports", "w", 10, LEASE, false);
        }
        enqueue("b", 100);
        List<ClaimedPosition> claimed = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            claimed.addAll(claims.claimWeighted("reports", "w", 1, LEASE, false));
        }
        assertThat(byKey(claimed).get("b")).as("b has had nothing, but a's 100 earlier starts are no debt of a's")
                .isBetween(10L, 11L);
    }

    @Test
    void aKeyThatWasIdleComesBackLevelWithTheOthersNotAheadOfThem() {
        enqueue("a", 10);
        enqueue("b", 400);
        for (int i = 0; i < 20; i++) {
            claims.claimWeighted("reports", "w", 1, LEASE, false);
        }
        // a's backlog is gone; b runs alone for 200 starts, then a comes back.
        for (int i = 0; i < 20; i++) {
            claims.claimWeighted("reports", "w", 10, LEASE, false);
        }
        enqueue("a", 100);
        List<ClaimedPosition> claimed = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            claimed.addAll(claims.claimWeighted("reports", "w", 1, LEASE, false));
        }
        assertThat(byKey(claimed).get("a")).as("b ran while a had nothing: that is no credit of a's")
                .isBetween(10L, 11L);
    }

    @Test
    void settingAWeightKeepsTheRateSetEarlierAndClearingRemovesBoth() {
        admin.setFairness("reports", "a", null, 30);
        FairnessSetting setting = admin.setFairness("reports", "a", 2.0, null);
        assertThat(setting.weight()).isEqualTo(2.0);
        assertThat(setting.ratePerMinute()).isEqualTo(30);
        assertThatIllegalArgumentException().isThrownBy(() -> admin.setFairness("reports", "a", -1.0, null))
                .withMessageContaining("weight");
        assertThatIllegalArgumentException().isThrownBy(() -> admin.setFairness("reports", "a", null, null))
                .withMessageContaining("clearFairness");
        assertThat(admin.clearFairness("reports", "a")).isTrue();
        assertThat(admin.fairnessSettings("reports", 10)).isEmpty();
    }

    @Test
    void theFairnessKeyIsTheRequestsOwnElseThePartitionKey() {
        JdbcJobQueue queue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        long own = queue.enqueue(JobRequest.of("reports", Map.of()).partitionKey("order-1").fairnessKey("tenant-a"));
        long partition = queue.enqueue(JobRequest.of("reports", Map.of()).partitionKey("order-2"));
        long emptyPartition = queue.enqueue(JobRequest.of("reports", Map.of()).partitionKey(""));
        long none = queue.enqueue(JobRequest.of("reports", Map.of()));
        Function<Long, String> fairnessKey = id -> database.jdbc().queryForObject(
                "SELECT fairness_key FROM workrow_job WHERE id = ?", String.class, id);
        assertThat(fairnessKey.apply(own)).isEqualTo("tenant-a");
        assertThat(fairnessKey.apply(partition)).isEqualTo("order-2");
        assertThat(fairnessKey.apply(emptyPartition)).isEmpty();
        assertThat(fairnessKey.apply(none)).as("no key is the key ''").isEmpty();
        List<Long> expected = new ArrayList<>(List.of(own, partition, emptyPartition, none));
        List<Long> claimed = claims.claimWeighted("reports", "w", 8, LEASE, false).stream().map(ClaimedPosition::id)
                .toList();
        assertThat(claimed).as("the empty key and no key are one group, and every job is claimed")
                .containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void theGroupWithoutAKeyTakesItsTurnOnceThoughItsJobsLieInTwoIndexes() {
        // Jobs without keys are in the unkeyed claim index; a job with the partition key "" has the
        // fairness key '' too but is in the keyed indexes. Both are the group ''.
        enqueue(null, 3);
        enqueue("", 3);
        enqueue("a", 3);
        assertThat(byKey(claims.claimSpaced("reports", "w", 16, LEASE, false, 1)))
                .as("one start per group").isEqualTo(Map.of("", 1L, "a", 1L));
        assertThat(byKey(claims.claimWeighted("reports", "w", 2, LEASE, false)))
                .as("equal shares").isEqualTo(Map.of("", 1L, "a", 1L));
        assertThat(byKey(claims.claimBurst("reports", "w", 16, LEASE, false, 1000)))
                .as("the rest, each once").isEqualTo(Map.of("", 4L, "a", 1L));
    }

    /** Eight claimers at once, as eight nodes would claim, until the key's window is spent. */
    @Test
    void burstNeverStartsMoreThanTheRateInAMinuteWithEightClaimersAtOnce() {
        enqueue("a", 1000);
        enqueue("b", 30);
        admin.setFairness("reports", "b", null, 20);
        claimConcurrently(8, Duration.ofSeconds(2),
                () -> claims.claimBurst("reports", "w", 16, LEASE, false, 100));
        List<Map<String, Object>> minutes = database.jdbc().queryForList("""
                SELECT partition_key, date_trunc('minute', started_at) AS minute, count(*) AS started
                FROM workrow_job WHERE status = 'running' GROUP BY 1, 2 ORDER BY 1, 2
                """);
        assertThat(minutes).isNotEmpty().allSatisfy(row -> assertThat((Long) row.get("started"))
                .as("%s", row).isLessThanOrEqualTo(row.get("partition_key").equals("b") ? 20L : 100L));
        assertThat(minutes.get(0).get("started")).as("a's first window is used in full").isEqualTo(100L);
    }

    @Test
    void spacedKeepsEachKeysStartsApartWithEightClaimersAtOnce() {
        enqueue("a", 50);
        enqueue("b", 50);
        claimConcurrently(8, Duration.ofMillis(2200),
                () -> claims.claimSpaced("reports", "w", 16, LEASE, false, 120));
        List<Map<String, Object>> gaps = database.jdbc().queryForList("""
                SELECT partition_key, count(*) AS started,
                       min(extract(epoch FROM started_at - previous) * 1000) AS closest_ms
                FROM (SELECT partition_key, started_at,
                             lag(started_at) OVER (PARTITION BY partition_key ORDER BY started_at) AS previous
                      FROM workrow_job WHERE status = 'running') AS starts
                GROUP BY partition_key
                """);
        assertThat(gaps).hasSize(2).allSatisfy(row -> {
            assertThat(((Number) row.get("started")).intValue()).as("%s", row).isBetween(4, 6);
            assertThat(((Number) row.get("closest_ms")).doubleValue()).as("%s", row).isGreaterThanOrEqualTo(500.0);
        });
    }

    private static void claimConcurrently(int claimers, Duration duration, Runnable claim) {
        AtomicBoolean going = new AtomicBoolean(true);
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int i = 0; i < claimers; i++) {
            running.add(CompletableFuture.runAsync(() -> {
                while (going.get()) {
                    claim.run();
                }
            }));
        }
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        going.set(false);
        running.forEach(CompletableFuture::join);
    }

    @Test
    void theStatePrunerDeletesOnlyKeysNoClaimTouchedForAWhile() {
        database.jdbc().update("""
                INSERT INTO workrow_fairness_state (queue, fairness_key, virtual_start, touched_at)
                VALUES ('reports', 'gone', 4, now() - interval '11 minutes'), ('reports', 'busy', 9, now())
                """);
        assertThat(store.fairness().pruneState(Duration.ofMinutes(10), 100)).isEqualTo(1);
        assertThat(database.jdbc().queryForList("SELECT fairness_key FROM workrow_fairness_state", String.class))
                .containsExactly("busy");
    }

    /**
     * What a claim reads over 1,000 keys as their backlog grows tenfold, from 10,000 to 100,000
     * jobs (and 10 without a key): a probe per key (the loose scan and the per-key state), so the
     * reads barely grow, where a walk of the backlog would grow tenfold. docs/patterns.md quotes
     * these figures.
     */
    @Test
    void aFairClaimReadsAboutOneProbePerKeyNotTheBacklog() throws Exception {
        insertBacklog(1, 10_000);
        enqueue(null, 10);
        Map<String, Integer> shallow = fairClaimBuffers(10_000);
        insertBacklog(10_001, 100_000);
        Map<String, Integer> deep = fairClaimBuffers(100_000);
        deep.forEach((statement, buffers) -> {
            assertThat(buffers).as(statement).isGreaterThanOrEqualTo(1_000);
            assertThat(buffers).as("%s: ten times the backlog, %d buffers against %d", statement, buffers,
                    shallow.get(statement)).isLessThan(2 * shallow.get(statement));
        });
    }

    /**
     * What a claim under a per-key cap ({@code key-concurrency}) reads over 1,000 partition keys as
     * the backlog grows tenfold, with half its jobs keyless (a fairness key alone): a probe or two per
     * key, and the keyless jobs through their claim indexes, not a walk of the backlog.
     */
    @Test
    void aKeyCappedClaimReadsAboutOneProbePerKeyNotTheBacklog() throws Exception {
        Map<String, Object> values = new HashMap<>();
        values.put("queue", "reports");
        values.put("worker", "w");
        values.put("limit", 16);
        values.put("lease_ms", 60_000L);
        values.put("probes", false);
        values.put("key_cap", 2);
        insertBacklog(1, 10_000);
        int shallow = ClaimCost.buffers(database, "JOB_CLAIM_KEY_CAPPED", values);
        insertBacklog(10_001, 100_000);
        int deep = ClaimCost.buffers(database, "JOB_CLAIM_KEY_CAPPED", values);
        System.out.printf("JOB_CLAIM_KEY_CAPPED of 16 over 1,000 keys: %d buffers at 10,000 jobs, %d at 100,000%n",
                shallow, deep);
        assertThat(deep).as("ten times the backlog, %d buffers against %d", deep, shallow).isLessThan(2 * shallow);
    }

    /** Jobs {@code from..to} over 1,000 keys: half keyed by partition key, half by a fairness key alone. */
    private void insertBacklog(int from, int to) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            String key = "key-" + (i % 1000);
            jobs.add(new NewJob("reports", i % 2 == 0 ? key : null, 0, 0, null, "{}", "{}", null, 0, 5, key));
            if (jobs.size() == 10_000 || i == to) {
                store.insertMany(jobs);
                jobs.clear();
            }
        }
        database.jdbc().execute("ANALYZE");
    }

    private static Map<String, Integer> fairClaimBuffers(int backlog) throws Exception {
        Map<String, Object> values = new HashMap<>();
        values.put("queue", "reports");
        values.put("worker", "w");
        values.put("limit", 16);
        values.put("pool", 128);
        values.put("lease_ms", 60_000L);
        values.put("probes", false);
        values.put("rate_per_minute", 600);
        Map<String, Integer> buffers = new java.util.LinkedHashMap<>();
        for (String statement : List.of("JOB_CLAIM_WEIGHTED", "JOB_CLAIM_BURST", "JOB_CLAIM_SPACED")) {
            int read = ClaimCost.buffers(database, statement, values);
            System.out.printf("%s of 16 over 1,000 keys with %,d pending jobs: %d buffers (%.1f per key)%n",
                    statement, backlog, read, read / 1000.0);
            buffers.put(statement, read);
        }
        return buffers;
    }
}

package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.ConcurrencyCap;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.CapAsk;
import io.workrow.queue.store.CapStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code global-concurrency}: at most N of a queue's jobs run at once across every node, whatever
 * each node's concurrency, proven from a ledger of every run's start and end; a crashed node's
 * slots come back when its leases do; a cap set at run time applies to runtimes that had none.
 */
class GlobalConcurrencyTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final JdbcQueueAdmin admin = new JdbcQueueAdmin(database.store());
    private final List<WorkerRuntime> runtimes = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();
    /** Every run: {start, end} in nanos, by the JVM's one clock. */
    private final List<long[]> ledger = Collections.synchronizedList(new ArrayList<>());
    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    record Call(int n, long napMillis) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_queue_cap");
    }

    @AfterEach
    void stop() {
        runtimes.forEach(WorkerRuntime::stop);
        pools.forEach(HikariDataSource::close);
    }

    private WorkerRuntime node(JobStore store, QueueOptions options) {
        WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                .pollInterval(Duration.ofMillis(200))
                .handler("partner", Call.class, (call, job) -> {
                    long start = System.nanoTime();
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    Thread.sleep(call.napMillis());
                    ledger.add(new long[] {start, System.nanoTime()});
                }, options)
                .build();
        runtimes.add(runtime);
        return runtime;
    }

    private JobStore otherNode() {
        JobStore node = database.otherNode(24);
        pools.add((HikariDataSource) node.dataSource());
        return node;
    }

    /** The most runs that overlapped at any instant of the ledger. */
    private int mostAtOnce() {
        List<long[]> events = new ArrayList<>();
        synchronized (ledger) {
            for (long[] run : ledger) {
                events.add(new long[] {run[0], 1});
                events.add(new long[] {run[1], -1});
            }
        }
        // Ends before starts at one instant: a slot freed and taken is not two at once.
        events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        int now = 0;
        int most = 0;
        for (long[] event : events) {
            now += (int) event[1];
            most = Math.max(most, now);
        }
        return most;
    }

    private void enqueue(int jobs, long napMillis) {
        jobQueue.enqueueAll(IntStream.range(0, jobs)
                .mapToObj(i -> JobRequest.of("partner", new Call(i, napMillis + i % 3 * 5))).toList());
    }

    @Test
    void aCapOfFiveOnThreeNodesWithFiftySlotsNeverRunsMoreThanFive() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(5);
        node(database.store(), options.withConcurrency(16)).start();
        node(otherNode(), options.withConcurrency(17)).start();
        node(otherNode(), options.withConcurrency(17)).start();
        enqueue(300, 20);

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger.size() == 300);

        assertThat(mostAtOnce()).as("never more than the cap").isLessThanOrEqualTo(5)
                .as("and the cap is used, not one at a time").isGreaterThanOrEqualTo(4);
        assertThat(runs).hasSize(300).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
        assertThat(admin.concurrencyCaps()).singleElement().satisfies(cap -> {
            assertThat(cap.configured()).isEqualTo(5);
            assertThat(cap.setByHand()).isNull();
        });
    }

    @Test
    void nodesWhoseTransactionsDefaultToRepeatableReadCountTheCapAfterTheirLockAllTheSame() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(4).withConcurrency(8);
        for (int node = 0; node < 2; node++) {
            HikariDataSource repeatableRead = new HikariDataSource();
            repeatableRead.setJdbcUrl(database.jdbcUrl());
            repeatableRead.setUsername(database.server().user());
            repeatableRead.setPassword(database.server().password());
            repeatableRead.setMaximumPoolSize(24);
            // A snapshot taken before the lock would miss the claims of whoever held it before.
            repeatableRead.setConnectionInitSql("SET default_transaction_isolation = 'repeatable read'");
            pools.add(repeatableRead);
            node(JobStore.of(repeatableRead, database.schema()), options).start();
        }
        enqueue(120, 20);

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger.size() == 120);

        assertThat(mostAtOnce()).isLessThanOrEqualTo(4).isGreaterThanOrEqualTo(3);
        assertThat(runs).hasSize(120).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aCrashedNodesSlotsComeBackWhenItsLeasesDo() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(5).withConcurrency(10);
        WorkerRuntime live = node(database.store(), options);
        enqueue(3, 0);
        // A node claims three jobs within the cap and dies: nothing ends them, nothing renews them.
        JobStore crashed = otherNode();
        crashed.caps().declare("crashed", Map.of("partner", new CapStore.Configured(5, null)));
        List<ClaimedPosition> held = crashed.claims().claimCapped("partner", new CapAsk(10, 10, 0, List.of()),
                (room, keyCap) -> crashed.claims().claim("partner", "crashed", room, Duration.ofSeconds(1), false));
        assertThat(held).hasSize(3);
        enqueue(40, 50);
        live.start();

        await().atMost(Duration.ofSeconds(5)).until(() -> ledger.size() >= 10);
        assertThat(mostAtOnce()).as("two slots left while the crashed node's leases run").isLessThanOrEqualTo(2);
        int beforeTheSweep = ledger.size();
        await().atMost(Duration.ofSeconds(5)).until(() -> new StaleLeaseSweeper(database.store(), 50).runOnce() > 0
                || database.jdbc().queryForObject("SELECT count(*) FROM workrow_claim WHERE worker = 'crashed'",
                        Integer.class) == 0);
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now()");

        await().atMost(Duration.ofSeconds(30)).until(() -> runs.size() == 43);
        List<long[]> afterTheSweep;
        synchronized (ledger) {
            afterTheSweep = new ArrayList<>(ledger.subList(beforeTheSweep, ledger.size()));
        }
        ledger.clear();
        ledger.addAll(afterTheSweep);
        assertThat(mostAtOnce()).as("the slots came back").isBetween(3, 5);
    }

    @Test
    void aCapSetAtRunTimeAppliesToARuntimeWithoutOneAndClearingItLiftsIt() {
        node(database.store(), QueueOptions.defaults().withConcurrency(12)).start();
        admin.setGlobalConcurrency("partner", 2, "partner asked us to slow down");
        assertThat(admin.concurrencyCaps()).singleElement().satisfies(cap -> {
            assertThat(cap.setByHand()).isEqualTo(2);
            assertThat(cap.cap()).isEqualTo(2);
            assertThat(cap.reason()).isEqualTo("set by hand: partner asked us to slow down");
        });
        // The runtime looks at the caps every two seconds.
        await().pollDelay(QueueCaps.REFRESH.plusMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> true);
        enqueue(40, 40);

        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() == 40);
        assertThat(mostAtOnce()).isLessThanOrEqualTo(2);

        assertThat(admin.clearGlobalConcurrency("partner")).isTrue();
        assertThat(admin.clearGlobalConcurrency("partner")).as("cleared already").isFalse();
        assertThat(admin.concurrencyCaps()).isEmpty();
        ledger.clear();
        enqueue(40, 200);
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() == 40);
        assertThat(mostAtOnce()).as("no cap now").isGreaterThan(2);
    }

    @Test
    void theLastRuntimeToStartDeclaresTheConfiguredCaps() {
        WorkerRuntime first = node(database.store(), QueueOptions.defaults().withGlobalConcurrency(3)
                .withKeyConcurrency(2));
        first.start();
        assertThat(admin.concurrencyCaps()).extracting(ConcurrencyCap::configured, ConcurrencyCap::keyConfigured)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(3, 2));
        WorkerRuntime second = node(otherNode(), QueueOptions.defaults().withGlobalConcurrency(4));
        second.start();
        assertThat(admin.concurrencyCaps()).extracting(ConcurrencyCap::configured, ConcurrencyCap::keyConfigured)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(4, null));
        admin.setGlobalConcurrency("partner", 1, null);
        admin.setKeyConcurrency("partner", 3, null);
        assertThat(admin.concurrencyCaps()).extracting(ConcurrencyCap::cap, ConcurrencyCap::keyCap)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1, 3));
        assertThatThrownBy(() -> admin.setKeyConcurrency("partner", 0, null)).hasMessageContaining("at least 1");
    }

    @Test
    void aKeyCapSetAtRunTimeAppliesToARuntimeWithoutOneTakesNoLineAndClearingItLiftsIt() throws Exception {
        Map<String, List<long[]>> byKey = new ConcurrentHashMap<>();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .pollInterval(Duration.ofMillis(200))
                .handler("partner", Call.class, (call, job) -> {
                    long start = System.nanoTime();
                    Thread.sleep(call.napMillis());
                    long[] run = {start, System.nanoTime()};
                    byKey.computeIfAbsent(job.partitionKey(), key -> Collections.synchronizedList(new ArrayList<>()))
                            .add(run);
                    ledger.add(run);
                }, QueueOptions.defaults().withConcurrency(12).withPrefetch(50))
                .build();
        runtimes.add(runtime);
        runtime.start();
        admin.setKeyConcurrency("partner", 1, "one call per tenant");
        assertThat(admin.concurrencyCaps()).singleElement().satisfies(cap -> {
            assertThat(cap.keyCap()).isEqualTo(1);
            assertThat(cap.cap()).as("no cluster-wide cap").isNull();
        });
        // The runtime looks at the caps every two seconds.
        await().pollDelay(QueueCaps.REFRESH.plusMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> true);
        List<JobRequest> requests = new ArrayList<>();
        for (String key : List.of("a", "b", "c")) {
            for (int i = 0; i < 8; i++) {
                requests.add(JobRequest.of("partner", new Call(i, 30)).partitionKey(key));
            }
        }
        for (int i = 0; i < 40; i++) {
            requests.add(JobRequest.of("partner", new Call(i, 100)).partitionKey("tenant-" + i));
        }
        jobQueue.enqueueAll(requests);
        // Nothing in line while the key cap is in force, though the queue's prefetch is 50: a line
        // would hold its keys' slots. Open positions at once: the 12 slots' jobs, and jobs whose
        // handlers returned while their ends are being written (at most as many again); a line
        // would add tens (43 were seen with one).
        int mostClaimed = 0;
        for (int sample = 0; sample < 20; sample++) {
            mostClaimed = Math.max(mostClaimed, admin.concurrencyCaps().get(0).running());
            Thread.sleep(15);
        }
        assertThat(mostClaimed).isBetween(4, 24);

        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() == 64);
        for (String key : List.of("a", "b", "c")) {
            ledger.clear();
            ledger.addAll(byKey.get(key));
            assertThat(mostAtOnce()).as("key %s one at a time", key).isEqualTo(1);
        }
        ledger.clear();
        byKey.values().forEach(ledger::addAll);
        assertThat(mostAtOnce()).as("the keys side by side").isGreaterThan(1);

        assertThat(admin.clearKeyConcurrency("partner")).isTrue();
        assertThat(admin.concurrencyCaps()).isEmpty();
        await().pollDelay(QueueCaps.REFRESH.plusMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> true);
        ledger.clear();
        byKey.clear();
        jobQueue.enqueueAll(IntStream.range(0, 8)
                .mapToObj(i -> JobRequest.of("partner", new Call(i, 200)).partitionKey("a")).toList());
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() == 8);
        assertThat(mostAtOnce()).as("no per-key cap now").isGreaterThan(1);
    }

    @Test
    void aKeyCapOfTwoOnThreeNodesRunsEachKeyAtMostTwiceAtOnceAndAHotKeyHidesNoOther() {
        Map<String, List<long[]>> byKey = new ConcurrentHashMap<>();
        List<long[]> all = Collections.synchronizedList(new ArrayList<>());
        QueueOptions options = QueueOptions.defaults().withKeyConcurrency(2).withConcurrency(16);
        for (int node = 0; node < 3; node++) {
            JobStore store = node == 0 ? database.store() : otherNode();
            WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                    .pollInterval(Duration.ofMillis(200))
                    .handler("partner", Call.class, (call, job) -> {
                        long start = System.nanoTime();
                        runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                        Thread.sleep(call.napMillis());
                        long[] run = {start, System.nanoTime()};
                        byKey.computeIfAbsent(job.partitionKey() == null ? "" : job.partitionKey(),
                                key -> Collections.synchronizedList(new ArrayList<>())).add(run);
                        all.add(run);
                    }, options)
                    .build();
            runtimes.add(runtime);
        }
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            requests.add(JobRequest.of("partner", new Call(i, 15)).partitionKey("hot"));
        }
        for (String key : List.of("a", "b", "c")) {
            for (int i = 0; i < 10; i++) {
                requests.add(JobRequest.of("partner", new Call(i, 15)).partitionKey(key));
            }
        }
        for (int i = 0; i < 10; i++) {
            requests.add(JobRequest.of("partner", new Call(i, 15)));
        }
        jobQueue.enqueueAll(requests);
        runtimes.forEach(WorkerRuntime::start);

        await().atMost(Duration.ofSeconds(60)).until(() -> all.size() == 120);

        byKey.forEach((key, keyRuns) -> {
            ledger.clear();
            ledger.addAll(keyRuns);
            if (!key.isEmpty()) {
                assertThat(mostAtOnce()).as("key %s never more than two at once", key).isLessThanOrEqualTo(2);
            }
        });
        ledger.clear();
        ledger.addAll(all);
        assertThat(mostAtOnce()).as("the keys ran beside each other").isGreaterThan(2);
        assertThat(runs).hasSize(120).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aLineTakesAtMostHalfTheRoomLeftAfterTheFreeSlotsSoOtherNodesSlotsFindRoom() {
        enqueue(60, 0);
        database.store().caps().declare("a", Map.of("partner", new CapStore.Configured(10, null)));
        // Each asks for 2 free slots and a line of 100, as a node of concurrency 2 and prefetch 100 would.
        assertThat(claimAsNode("a")).as("2 slots, and 4 of the 8 left for the line").isEqualTo(6);
        assertThat(claimAsNode("b")).as("2 slots, and 1 of the 2 left").isEqualTo(3);
        assertThat(claimAsNode("c")).as("the last one for a slot, none for a line").isEqualTo(1);
        assertThat(claimAsNode("d")).as("the cap is full").isZero();
        assertThat(admin.concurrencyCaps()).singleElement().extracting(ConcurrencyCap::running).isEqualTo(10);

        assertThat(new CapAsk(102, 0, 0, List.of()).room(10, 9)).as("a line never takes the last slot").isZero();
        assertThat(new CapAsk(102, 0, 0, List.of()).room(10, 8)).as("nor more than half of two").isEqualTo(1);
        assertThat(new CapAsk(4000, 16, 0, List.of()).room(1000, 16)).as("a cap far from full").isEqualTo(16 + 484);
        assertThat(new CapAsk(40, 16, 0, List.of()).room(1000, 16)).as("no more than asked").isEqualTo(40);
        assertThat(new CapAsk(10, 10, 0, List.of()).room(5, 7)).as("over the cap (lowered by hand)").isZero();
        // A node's whole line, not each claim's part of it, is bounded: it never holds more than the
        // room it leaves free. Cap 48, six nodes of 8 slots: the first takes its 8 slots and a line
        // of 20, and its next claims take nothing more while its line is as large as the room left.
        assertThat(new CapAsk(40, 8, 0, List.of()).room(48, 0)).isEqualTo(8 + 20);
        assertThat(new CapAsk(40, 0, 20, List.of()).room(48, 28)).as("line 20, room left 20").isZero();
        assertThat(new CapAsk(40, 0, 10, List.of()).room(48, 28)).as("line 10 of it started").isEqualTo(5);
        assertThat(new CapAsk(40, 8, 20, List.of()).withoutLine().room(48, 28)).as("no line: slots only")
                .isEqualTo(8);
    }

    private int claimAsNode(String worker) {
        return claimAsNode(worker, List.of()).size();
    }

    private List<ClaimedPosition> claimAsNode(String worker, List<ClaimedPosition> finished) {
        return database.store().claims().claimCapped("partner", new CapAsk(102, 2, 0, finished),
                (room, keyCap) -> database.store().claims()
                .claim("partner", worker, room, Duration.ofMinutes(1), false));
    }

    @Test
    void aJobWhoseHandlerReturnedFreesItsSlotForItsNodesNextClaimBeforeItsEndIsWritten() {
        enqueue(20, 0);
        database.store().caps().declare("a", Map.of("partner", new CapStore.Configured(4, null)));
        List<ClaimedPosition> held = claimAsNode("a", List.of());
        assertThat(held).as("2 slots and 1 of the 2 left").hasSize(3);
        assertThat(claimAsNode("a", List.of())).as("1 slot left, for no line").hasSize(1);
        assertThat(claimAsNode("a", List.of())).isEmpty();
        // Two handlers returned; their ends are not written: the node's claim counts their slots free.
        List<ClaimedPosition> again = claimAsNode("a", held.subList(0, 2));
        assertThat(again).hasSize(2);
        assertThat(claimAsNode("b", List.of())).as("another node still counts them").isEmpty();
        assertThat(claimAsNode("a", held.subList(0, 2))).as("counted free once, not twice").isEmpty();
        assertThat(admin.concurrencyCaps()).singleElement().extracting(ConcurrencyCap::running).isEqualTo(6);
    }

    @Test
    void nodesWithLinesUnderACapOfSixNeverRunMoreThanSixAndALateNodesSlotsFindRoom() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(6).withConcurrency(3);
        node(database.store(), options).start();
        enqueue(90, 40);
        // The first node holds a line beside its three running jobs: more than its slots are claimed.
        await().atMost(Duration.ofSeconds(10)).until(() -> admin.concurrencyCaps().stream()
                .anyMatch(cap -> cap.running() > 3));
        int before = ledger.size();
        AtomicInteger secondRan = new AtomicInteger();
        JobStore store = otherNode();
        WorkerRuntime second = WorkerRuntime.builder(store.dataSource()).store(store)
                .pollInterval(Duration.ofMillis(200))
                .handler("partner", Call.class, (call, job) -> {
                    long start = System.nanoTime();
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    secondRan.incrementAndGet();
                    Thread.sleep(call.napMillis());
                    ledger.add(new long[] {start, System.nanoTime()});
                }, options.withPrefetch(0))
                .build();
        runtimes.add(second);
        second.start();

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger.size() == 90);

        assertThat(mostAtOnce()).as("lines count against the cap").isLessThanOrEqualTo(6);
        assertThat(secondRan.get()).as("the late node's free slots found room beside the first node's line (%d"
                + " had run before it started)", before).isGreaterThanOrEqualTo(3);
        assertThat(runs).hasSize(90).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aKeyCapTakesNoPrefetchAndBadValuesAreRefused() {
        assertThat(QueueOptions.defaults().withGlobalConcurrency(5).adaptsPrefetch()).as("a line within the cap")
                .isTrue();
        assertThatThrownBy(() -> QueueOptions.defaults().withPrefetch(4).withGlobalConcurrency(5))
                .hasMessageContaining("a fixed prefetch is not available with global-concurrency");
        assertThatThrownBy(() -> QueueOptions.defaults().withGlobalConcurrency(-1))
                .hasMessageContaining("global-concurrency");
        assertThatThrownBy(() -> admin.setGlobalConcurrency("partner", 0, null))
                .hasMessageContaining("at least 1");
        assertThat(QueueOptions.defaults().withKeyConcurrency(2).mostPrefetched()).isZero();
        assertThatThrownBy(() -> QueueOptions.defaults().withPrefetch(4).withKeyConcurrency(2))
                .hasMessageContaining("prefetch is not available with key-concurrency");
        assertThatThrownBy(() -> QueueOptions.defaults().withOrdering(KeyOrdering.BLOCK).withKeyConcurrency(2))
                .hasMessageContaining("key-concurrency is not available with ordered or fair queues");
    }
}

package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.ConcurrencyCap;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.CapStore;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SlotShare;
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
        database.jdbc().update("DELETE FROM workrow_cap_share");
    }

    @AfterEach
    void stop() {
        runtimes.forEach(WorkerRuntime::stop);
        pools.forEach(HikariDataSource::close);
    }

    /** A node whose runs go in the ledger. */
    private WorkerRuntime node(JobStore store, QueueOptions options) {
        return countingNode(store, options, new AtomicInteger());
    }

    /** A node whose runs go in the ledger and are counted in {@code ran} as well. */
    private WorkerRuntime countingNode(JobStore store, QueueOptions options, AtomicInteger ran) {
        WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                .pollInterval(Duration.ofMillis(200))
                .handler("partner", Call.class, (call, job) -> {
                    long start = System.nanoTime();
                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                    ran.incrementAndGet();
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
    void aCrashedNodesShareComesBackWhenItLapses() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(5).withConcurrency(10);
        WorkerRuntime live = node(database.store(), options);
        database.store().caps().declare("live", Map.of("partner", new CapStore.Configured(5, null)));
        // A node took a share of three slots and died: nothing renews it, nothing gives it back.
        JobStore crashed = otherNode();
        assertThat(crashed.claims().resizeShare("partner", "crashed", Duration.ofSeconds(2), Duration.ofSeconds(2),
                (cap, others) -> new SlotShare("crashed", 3, 3)).slots()).isEqualTo(3);
        long lapses = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        enqueue(200, 40);
        live.start();

        await().atMost(Duration.ofSeconds(5)).until(() -> ledger.size() >= 10);
        assertThat(mostAtOnce()).as("two slots left while the crashed node's share counts").isLessThanOrEqualTo(2);
        await().atMost(Duration.ofSeconds(5)).until(() -> System.nanoTime() - lapses > 0);
        int beforeTheLapse = ledger.size();

        await().atMost(Duration.ofSeconds(30)).until(() -> runs.size() == 200);
        List<long[]> afterTheLapse;
        synchronized (ledger) {
            afterTheLapse = new ArrayList<>(ledger.subList(beforeTheLapse, ledger.size()));
        }
        ledger.clear();
        ledger.addAll(afterTheLapse);
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
    void twoBusyNodesSplitTheCapAndANodeThatStopsGivesItsShareBack() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(6).withConcurrency(8);
        node(database.store(), options).start();
        enqueue(400, 60);
        await().atMost(Duration.ofSeconds(10)).until(() -> shares().getOrDefault(runtimes.get(0).workerId(), 0) == 6);
        AtomicInteger secondRan = new AtomicInteger();
        WorkerRuntime second = countingNode(otherNode(), options, secondRan);
        second.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> shares().values().stream().sorted().toList()
                .equals(List.of(3, 3)));
        await().atMost(Duration.ofSeconds(5)).until(() -> secondRan.get() > 0);
        second.stop();
        assertThat(shares()).as("given back at stop").doesNotContainKey(second.workerId());
        await().atMost(Duration.ofSeconds(60)).until(() -> runs.size() == 400);

        assertThat(mostAtOnce()).as("never more than the cap").isLessThanOrEqualTo(6)
                .as("and the cap used").isGreaterThanOrEqualTo(5);
        assertThat(runs).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aNodeWhoseShareAnotherHoldsStartsNoMoreUntilTheCapHasRoomAgain() throws Exception {
        WorkerRuntime runtime = node(database.store(), QueueOptions.defaults().withGlobalConcurrency(3)
                .withConcurrency(6).withLease(Duration.ofSeconds(3)));
        runtime.start();
        enqueue(300, 100);
        await().atMost(Duration.ofSeconds(10)).until(() -> ledger.size() >= 6);
        // Its share gone (lapsed, say, while the node was frozen), and the whole cap another node's.
        database.jdbc().update("DELETE FROM workrow_cap_share WHERE worker = ?", runtime.workerId());
        database.jdbc().update("INSERT INTO workrow_cap_share (queue, worker, slots, wanted, expires_at)"
                + " VALUES ('partner', 'other', 3, 3, now() + interval '1 hour')");
        long taken = System.nanoTime();

        Thread.sleep(2000);
        long quietFrom = taken + Duration.ofSeconds(1).toNanos();
        synchronized (ledger) {
            assertThat(ledger.stream().filter(run -> run[0] > quietFrom).count())
                    .as("no start a second after the cap was full of another node's share").isZero();
        }
        database.jdbc().update("DELETE FROM workrow_cap_share WHERE worker = 'other'");
        await().atMost(Duration.ofSeconds(60)).until(() -> runs.size() == 300);
        assertThat(runs).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aNodeWithoutALineTakesItsWholeShareAgainWhenWorkComesDuringALull() throws Exception {
        // No line but the one job ahead a capped queue keeps: a fixed prefetch of 0, as slow
        // handlers' adaptive prefetch is.
        node(database.store(), QueueOptions.defaults().withGlobalConcurrency(8).withConcurrency(8).withPrefetch(0))
                .start();
        enqueue(2, 3000);
        // A lull: two long jobs run for longer than the share keeps unused slots, so it gives back to 2.
        await().atMost(Duration.ofSeconds(10)).until(() -> shares().values().stream().mapToInt(i -> i).sum() == 2);
        // Work comes while those two still run and fill the share.
        enqueue(40, 300);

        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() == 42);
        assertThat(mostAtOnce()).as("the share grew back to the cap while the long jobs ran").isEqualTo(8);
    }

    @Test
    void underACapOfOneNoJobWaitsInTheLineOfANodeWithoutASlot() throws Exception {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(1).withConcurrency(4);
        WorkerRuntime first = node(database.store(), options);
        WorkerRuntime second = node(otherNode(), options);
        first.start();
        second.start();
        enqueue(40, 100);
        // Whichever node has no slot claims nothing, and hands back within a second what waited in
        // its line when it lost its slot: no job waits there for the backlog (four seconds).
        Map<Long, Long> inLineSince = new java.util.HashMap<>();
        long[] longestWait = {0};
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Map<String, Integer> shares = shares();
            long now = System.nanoTime();
            java.util.Set<Long> waiting = new java.util.HashSet<>();
            for (WorkerRuntime node : List.of(first, second)) {
                if (shares.getOrDefault(node.workerId(), 0) == 0) {
                    waiting.addAll(database.jdbc().queryForList("""
                            SELECT held.id
                            FROM workrow_claim AS claim
                            CROSS JOIN LATERAL unnest(claim.ids) WITH ORDINALITY AS held(id, position)
                            WHERE claim.worker = ? AND get_bit(claim.settled, held.position::int - 1) = 0
                              AND get_bit(claim.dropped, held.position::int - 1) = 0
                            """, Long.class, node.workerId()));
                }
            }
            inLineSince.keySet().retainAll(waiting);
            for (Long id : waiting) {
                longestWait[0] = Math.max(longestWait[0], now - inLineSince.computeIfAbsent(id, first1 -> now));
            }
            return runs.size() == 40;
        });
        assertThat(mostAtOnce()).isEqualTo(1);
        assertThat(Duration.ofNanos(longestWait[0])).as("handed back, not held for the backlog")
                .isLessThan(Duration.ofSeconds(3));
        assertThat(runs).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void anOrderedQueuesSlotsGoRoundTheNodesEachOwningItsKeys() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(1).withConcurrency(4)
                .withOrdering(KeyOrdering.BLOCK);
        Map<String, AtomicInteger> byNode = new ConcurrentHashMap<>();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        for (int n = 0; n < 2; n++) {
            JobStore store = n == 0 ? database.store() : otherNode();
            String name = "node-" + n;
            WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                    .pollInterval(Duration.ofMillis(200)).heartbeatInterval(Duration.ofMillis(200))
                    .handler("partner", Call.class, (call, job) -> {
                        long start = System.nanoTime();
                        runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                        byNode.computeIfAbsent(name, key -> new AtomicInteger()).incrementAndGet();
                        order.add(name);
                        Thread.sleep(call.napMillis());
                        ledger.add(new long[] {start, System.nanoTime()});
                    }, options)
                    .build();
            runtimes.add(runtime);
            runtime.start();
        }
        // Both nodes see each other, and share the keys' buckets, before the work comes.
        await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> database.jdbc()
                .queryForObject("SELECT count(*) FROM workrow_worker WHERE heartbeat_at > now() - interval '1 second'",
                        Integer.class) == 2);
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            requests.add(JobRequest.of("partner", new Call(i, 30)).partitionKey("key-" + i % 24));
        }
        jobQueue.enqueueAll(requests);

        await().atMost(Duration.ofSeconds(60)).until(() -> runs.size() == 120);
        assertThat(mostAtOnce()).isEqualTo(1);
        // Each node owns about half the keys and only it can run them: without turns, one node's
        // keys would wait for the other's whole backlog. With them both run in the first half.
        List<String> firstHalf;
        synchronized (order) {
            firstHalf = List.copyOf(order.subList(0, 60));
        }
        assertThat(firstHalf).as("both nodes ran in the first half of the backlog").contains("node-0", "node-1");
        assertThat(runs).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    /** The live shares of the queue's cap, by worker. */
    private Map<String, Integer> shares() {
        Map<String, Integer> shares = new java.util.TreeMap<>();
        database.jdbc().query("SELECT worker, slots FROM workrow_cap_share WHERE queue = 'partner'"
                + " AND expires_at > clock_timestamp()", rs -> {
            shares.put(rs.getString("worker"), rs.getInt("slots"));
        });
        return shares;
    }

    @Test
    void eachNodesFairPartFillsTheSmallestWantsFirstAndSplitsTheRestEvenly() {
        assertThat(CapShare.fairParts(5, List.of(new SlotShare("a", 0, 16), new SlotShare("b", 0, 16),
                new SlotShare("c", 0, 16)), false)).containsExactly(Map.entry("a", 2), Map.entry("b", 2), Map.entry("c", 1));
        assertThat(CapShare.fairParts(10, List.of(new SlotShare("a", 0, 16), new SlotShare("b", 0, 1),
                new SlotShare("c", 0, 3)), false)).as("small wants met whole, the rest to the big one")
                .containsEntry("b", 1).containsEntry("c", 3).containsEntry("a", 6);
        assertThat(CapShare.fairParts(4, List.of(new SlotShare("a", 0, 0), new SlotShare("b", 0, 8)), false))
                .containsEntry("a", 0).containsEntry("b", 4);
        List<SlotShare> oneSlot = List.of(new SlotShare("a", 1, 16, 0), new SlotShare("b", 0, 16, 1500),
                new SlotShare("c", 0, 16, 400));
        assertThat(CapShare.fairParts(1, oneSlot, false)).as("by worker order").containsEntry("a", 1);
        assertThat(CapShare.fairParts(1, oneSlot, true)).as("an ordered queue's slot goes to who waited a turn")
                .containsEntry("b", 1).containsEntry("a", 0).containsEntry("c", 0);
    }

    @Test
    void nodesWithLinesUnderACapOfSixNeverRunMoreThanSixAndALateNodesSlotsFindRoom() {
        QueueOptions options = QueueOptions.defaults().withGlobalConcurrency(6).withConcurrency(3);
        node(database.store(), options).start();
        enqueue(90, 40);
        // The first node holds a line beside its three running jobs: more than its share is claimed.
        await().atMost(Duration.ofSeconds(10)).until(() -> admin.concurrencyCaps().stream()
                .anyMatch(cap -> cap.running() > 3));
        int before = ledger.size();
        AtomicInteger secondRan = new AtomicInteger();
        WorkerRuntime second = countingNode(otherNode(), options.withPrefetch(0), secondRan);
        second.start();

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger.size() == 90);

        assertThat(mostAtOnce()).as("lines hold no share: never more than the cap run").isLessThanOrEqualTo(6);
        assertThat(secondRan.get()).as("the late node's share found room beside the first node's line (%d"
                + " had run before it started)", before).isGreaterThanOrEqualTo(3);
        assertThat(runs).hasSize(90).allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aKeyCapTakesNoPrefetchAndBadValuesAreRefused() {
        assertThat(QueueOptions.defaults().withGlobalConcurrency(5).adaptsPrefetch()).as("a line holds no share")
                .isTrue();
        assertThat(QueueOptions.defaults().withPrefetch(4).withGlobalConcurrency(5).prefetch()).isEqualTo(4);
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

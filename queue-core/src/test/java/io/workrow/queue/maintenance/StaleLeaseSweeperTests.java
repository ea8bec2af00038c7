package io.workrow.queue.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.NewJob;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.RetryBackoff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class StaleLeaseSweeperTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    @Test
    void sweepersOnManyNodesAtOnceMoveEachExpiredJobExactlyOnce() throws Exception {
        JobStore store = database.store();
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            jobs.add(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 0, 5));
        }
        store.insertMany(jobs);
        for (int claim = 0; claim < 40; claim++) { // one claim row each on the write-once layout
            store.claims().claim("q", "crashed-worker", 50, Duration.ofMinutes(1), false);
        }
        database.rows().expireEveryLease();

        int nodes = 4;
        ExecutorService pool = Executors.newFixedThreadPool(nodes);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> moved = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            StaleLeaseSweeper sweeper = new StaleLeaseSweeper(store, 50);
            moved.add(pool.submit(() -> {
                go.await();
                return sweeper.runOnce();
            }));
        }
        go.countDown();
        int total = 0;
        for (Future<Integer> count : moved) {
            total += count.get();
        }
        pool.shutdown();

        assertThat(total).isEqualTo(2000);
        assertThat(database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_job WHERE status = 'scheduled' AND claimed_by IS NULL", Integer.class))
                .isEqualTo(2000);
    }

    @Test
    void aRecoveredJobWaitsItsQueuesBackoffAndItsLagCountsFromThen() {
        database.deleteAllJobs();
        JobStore store = database.store();
        store.insertMany(List.of(new NewJob("slow", null, 0, 0, null, "{}", "{}", null, 0, 5),
                new NewJob("other", null, 0, 0, null, "{}", "{}", null, 0, 5)));
        store.claims().claim("slow", "crashed-worker", 1, Duration.ofMinutes(1), false);
        store.claims().claim("other", "crashed-worker", 1, Duration.ofMinutes(1), false);
        // Due an hour ago, its lease long expired: without a new run_at it would look an hour late.
        database.rows().setRunningDueSince(Duration.ofHours(1));
        database.rows().expireEveryLease();

        StaleLeaseSweeper sweeper = new StaleLeaseSweeper(store, 50, io.workrow.queue.metrics.QueueMetrics.NOOP,
                java.util.Map.of("slow", new RetryBackoff(Duration.ofMinutes(10), 2.0, Duration.ofHours(1), 0.0)),
                new RetryBackoff(Duration.ofSeconds(30), 2.0, Duration.ofHours(1), 0.0));
        assertThat(sweeper.runOnce()).isEqualTo(2);

        assertThat(database.jdbc().queryForObject("SELECT run_at - now() BETWEEN interval '9 minutes'"
                + " AND interval '10 minutes' FROM workrow_job WHERE queue = 'slow'", Boolean.class))
                .as("the queue's own backoff after its first attempt").isTrue();
        assertThat(database.jdbc().queryForObject("SELECT run_at - now() BETWEEN interval '29 seconds'"
                + " AND interval '30 seconds' FROM workrow_job WHERE queue = 'other'", Boolean.class))
                .as("the default backoff").isTrue();
        assertThat(store.queueDepth()).allSatisfy(depth -> assertThat(depth.lag()).isZero());
        database.deleteAllJobs();
    }

    @Test
    void aQueuesOwnRulesApplyOnANodeConfiguredOtherwise() {
        database.deleteAllJobs();
        JobStore store = database.store();
        // Node A works "fragile": a job whose lease expires twice is dead, a recovered one waits 10 minutes.
        QueueOptions fragile = QueueOptions.defaults().withMaxLeaseExpiries(2)
                .withBackoff(new RetryBackoff(Duration.ofMinutes(10), 2.0, Duration.ofHours(1), 0.0));
        io.workrow.queue.worker.WorkerRuntime nodeA = io.workrow.queue.worker.WorkerRuntime
                .builder(database.dataSource()).store(store)
                .handler("fragile", String.class, (payload, job) -> { }, fragile).build();
        nodeA.start();
        nodeA.stop();
        store.insertMany(List.of(new NewJob("fragile", null, 0, 0, null, "{}", "{}", null, 0, 5),
                new NewJob("fragile", null, 0, 0, null, "{}", "{}", null, 0, 5)));
        store.claims().claim("fragile", "crashed-worker", 2, Duration.ofMinutes(1), false);
        long twice = database.jdbc().queryForObject("SELECT min(id) FROM workrow_job", Long.class);
        database.rows().setRunningExpiries(twice, 1);
        database.rows().expireEveryLease();

        // Node B sweeps with its own, other settings for the queue: no expiry limit, a 30 s backoff.
        QueueOptions nodeBsFragile = QueueOptions.defaults()
                .withBackoff(new RetryBackoff(Duration.ofSeconds(30), 2.0, Duration.ofHours(1), 0.0));
        StaleLeaseSweeper nodeB = new StaleLeaseSweeper(store, 50, io.workrow.queue.metrics.QueueMetrics.NOOP,
                java.util.Map.of("fragile", nodeBsFragile), QueueOptions.defaults());
        assertThat(nodeB.runOnce()).isEqualTo(2);

        assertThat(database.jdbc().queryForMap("SELECT status, last_error FROM workrow_job WHERE id = ?", twice))
                .containsEntry("status", "dead").containsEntry("last_error", "lease expired 2 times; last held by"
                        + " crashed-worker");
        assertThat(database.jdbc().queryForObject("SELECT status = 'scheduled' AND run_at - now()"
                + " BETWEEN interval '9 minutes' AND interval '10 minutes' FROM workrow_job WHERE id <> ?",
                Boolean.class, twice)).as("node A's backoff, not node B's").isTrue();
        database.deleteAllJobs();
    }

    @Test
    void aLongPassOfOneTaskHoldsUpNoOtherTask() throws Exception {
        CountDownLatch pruning = new CountDownLatch(1);
        CountDownLatch endPrune = new CountDownLatch(1);
        CountDownLatch swept = new CountDownLatch(5);
        MaintenanceTask longPrune = new MaintenanceTask() {
            @Override
            public String name() {
                return "long-prune";
            }

            @Override
            public int runOnce() {
                pruning.countDown();
                try {
                    endPrune.await(); // the first prune of months of history
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 0;
            }
        };
        MaintenanceTask sweeper = new MaintenanceTask() {
            @Override
            public String name() {
                return "sweeper";
            }

            @Override
            public int runOnce() {
                swept.countDown();
                return 0;
            }
        };
        try (MaintenanceScheduler scheduler = new MaintenanceScheduler().every(Duration.ofMillis(20), longPrune)
                .every(Duration.ofMillis(20), sweeper)) {
            scheduler.start();
            assertThat(pruning.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(swept.await(5, java.util.concurrent.TimeUnit.SECONDS))
                    .as("the sweeper runs on while a prune takes long").isTrue();
        } finally {
            endPrune.countDown();
        }
    }

    @Test
    void schedulerRunsTasksUntilClosed() throws Exception {
        CountDownLatch ran = new CountDownLatch(3);
        MaintenanceTask counting = new MaintenanceTask() {
            @Override
            public String name() {
                return "counting";
            }

            @Override
            public int runOnce() {
                ran.countDown();
                return 0;
            }
        };
        try (MaintenanceScheduler scheduler = new MaintenanceScheduler().every(Duration.ofMillis(20), counting)) {
            scheduler.start();
            assertThat(ran.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aQueueWithMaxLeaseExpiriesParksAJobThatKeepsKillingItsWorkersWithoutSpendingItsAttempts() {
        database.deleteAllJobs();
        JobStore store = database.store();
        long id = store.insertMany(List.of(new NewJob("crashy", null, 0, 0, null, "{}", "{}", null, 0, 5))).get(0);
        StaleLeaseSweeper sweeper = new StaleLeaseSweeper(store, 50, io.workrow.queue.metrics.QueueMetrics.NOOP,
                java.util.Map.of("crashy", QueueOptions.defaults().withMaxLeaseExpiries(3)
                        .withBackoff(new RetryBackoff(Duration.ofMillis(1), 1.0, Duration.ofMillis(1), 0.0))),
                QueueOptions.defaults());
        for (int crash = 1; crash <= 3; crash++) {
            database.rows().makeDue(id, Duration.ZERO);
            assertThat(store.claims().claim("crashy", "worker-" + crash, 1, Duration.ofMinutes(1), false)).hasSize(1);
            database.rows().expireEveryLease();
            assertThat(sweeper.runOnce()).isEqualTo(1);
            java.util.Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
            assertThat(row.get("lease_expiries")).isEqualTo(crash);
            assertThat(row.get("attempts")).as("an expiry is not a handler failure").isEqualTo(0);
            assertThat(row.get("status")).isEqualTo(crash < 3 ? "scheduled" : "dead");
        }
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class, id))
                .isEqualTo("lease expired 3 times; last held by worker-3");
    }

    @Test
    void withoutALimitAnExpirySpendsItsAttemptAndIsStillCountedApart() {
        database.deleteAllJobs();
        JobStore store = database.store();
        long id = store.insertMany(List.of(new NewJob("plain", null, 0, 0, null, "{}", "{}", null, 0, 2))).get(0);
        StaleLeaseSweeper sweeper = new StaleLeaseSweeper(store, 50, io.workrow.queue.metrics.QueueMetrics.NOOP,
                java.util.Map.of(), QueueOptions.defaults()
                        .withBackoff(new RetryBackoff(Duration.ofMillis(1), 1.0, Duration.ofMillis(1), 0.0)));
        for (int crash = 1; crash <= 2; crash++) {
            database.rows().makeDue(id, Duration.ZERO);
            store.claims().claim("plain", "worker-" + crash, 1, Duration.ofMinutes(1), false);
            database.rows().expireEveryLease();
            assertThat(sweeper.runOnce()).isEqualTo(1);
        }
        java.util.Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
        assertThat(row.get("status")).isEqualTo("dead");
        assertThat(row.get("attempts")).isEqualTo(2);
        assertThat(row.get("lease_expiries")).isEqualTo(2);
        assertThat((String) row.get("last_error")).isEqualTo("lease expired while held by worker-2");
    }
}

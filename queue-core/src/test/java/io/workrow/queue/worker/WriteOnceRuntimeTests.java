package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.NewJob;
import io.workrow.queue.store.RecoveryRule;
import io.workrow.queue.store.WriteOnceStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The runtime on the write-once layout ({@link WriteOnceStore} as its claim statements), with a
 * sweeper running beside it the whole time: jobs claimed as one batch share one lease, and what
 * happens to one of them (it fails, is cancelled, is let go, is locked by an operator's session)
 * leaves its batch-mates' leases and outcomes alone.
 */
class WriteOnceRuntimeTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final RecoveryRule NO_BACKOFF = new RecoveryRule("", 0, 1.0, 0, 0, 0);

    private final WriteOnceStore store = database.writeOnceStore();
    private final JdbcTemplate jdbc = database.jdbc();
    private final AtomicBoolean sweeping = new AtomicBoolean(true);
    private final AtomicInteger swept = new AtomicInteger();
    private Thread sweeper;

    record Task(String name) {
    }

    @BeforeAll
    static void createLedger() {
        database.jdbc().execute("CREATE TABLE IF NOT EXISTS ledger (reference text PRIMARY KEY)");
    }

    @BeforeEach
    void emptyTablesAndSweep() {
        jdbc.execute("TRUNCATE workrow_lease_holder, ledger, " + String.join(", ", WriteOnceStore.JOB_TABLES));
        sweeper = new Thread(() -> {
            while (sweeping.get()) {
                swept.addAndGet(store.sweepExpiredLeases(100, List.of(), NO_BACKOFF).size());
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "test-sweeper");
        sweeper.start();
    }

    @AfterEach
    void stopSweeping() throws InterruptedException {
        sweeping.set(false);
        sweeper.join();
    }

    private WorkerRuntime.Builder runtime() {
        return WorkerRuntime.builder(database.dataSource()).store(store)
                .pollInterval(Duration.ofMillis(100));
    }

    private List<Long> enqueue(String queue, int maxAttempts, String... names) {
        return store.insertMany(java.util.Arrays.stream(names).map(name -> new NewJob(queue, null, 0, 0, null,
                "{\"name\":\"" + name + "\"}", "{}", null, 0, maxAttempts)).toList());
    }

    private String status(long id) {
        return jdbc.queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }

    private List<String> outcomes(long id) {
        return jdbc.queryForList("SELECT status FROM workrow_outcome WHERE job_id = ? ORDER BY attempt, finished_at",
                String.class, id);
    }

    /** Metrics that count the outcomes handled, by outcome, into {@code handled}. */
    private static QueueMetrics countingOutcomes(Map<JobOutcome, AtomicInteger> handled) {
        return new QueueMetrics() {
            @Override
            public void handled(String queue, JobOutcome outcome, Duration handlerTime) {
                handled.computeIfAbsent(outcome, key -> new AtomicInteger()).incrementAndGet();
            }
        };
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Test
    void jobsClaimedInBatchesCompleteEachWithOneOutcome() {
        List<Long> ids = enqueue("mail", 3, IntStream.range(0, 60).mapToObj(i -> "m" + i).toArray(String[]::new));
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        try (WorkerRuntime runtime = runtime().handler("mail", Task.class, (task, job) ->
                runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet(),
                QueueOptions.defaults().withConcurrency(8).withBatchSize(16)).build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 60);
        }
        assertThat(runs).hasSize(60).allSatisfy((id, count) -> assertThat(count).hasValue(1));
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT claim_token) FROM workrow_outcome", Integer.class))
                .as("claimed in batches, not one by one").isLessThan(60);
        ids.forEach(id -> assertThat(outcomes(id)).containsExactly("completed"));
        assertThat(swept).hasValue(0);
    }

    @Test
    void aFailingJobIsRetriedThenDeadWhileItsBatchMatesComplete() {
        List<Long> ids = enqueue("mail", 2, "fails", "works", "works too");
        RetryBackoff quick = new RetryBackoff(Duration.ofMillis(10), 1.0, Duration.ofMillis(10), 0.0);
        try (WorkerRuntime runtime = runtime().handler("mail", Task.class, (task, job) -> {
            if (task.name().equals("fails")) {
                throw new IllegalStateException("smtp refused " + job.attempt());
            }
        }, QueueOptions.defaults().withBackoff(quick)).build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> "dead".equals(status(ids.get(0))));
        }
        assertThat(outcomes(ids.get(0))).containsExactly("failed", "dead");
        assertThat(jdbc.queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class, ids.get(0)))
                .contains("smtp refused 2");
        assertThat(outcomes(ids.get(1))).containsExactly("completed");
        assertThat(outcomes(ids.get(2))).containsExactly("completed");
    }

    /**
     * Lease 1 s, timeout 5 s: the stubborn handler is let go at about 6 s. Concurrency 2 and one
     * job in line, so one batch of three: the stubborn job and a 4 s job start at once; the third waits in line for the 4 s
     * job's slot, then runs across the let-go, so it completes only if its claim, shared with the
     * job let go, kept its lease all along.
     */
    @Test
    void aHandlerLetGoPastItsTimeoutEndsAloneAndItsBatchMatesKeepTheirLease() throws Exception {
        List<Long> ids = enqueue("stubborn", 1, "stubborn", "four seconds", "across the let-go");
        AtomicInteger abandoned = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean stubbornReturned = new AtomicBoolean();
        QueueMetrics metrics = new QueueMetrics() {
            @Override
            public void abandoned(String queue) {
                abandoned.incrementAndGet();
            }
        };
        try (WorkerRuntime runtime = runtime().metrics(metrics).handler("stubborn", Task.class, (task, job) -> {
            switch (task.name()) {
                case "stubborn" -> {
                    while (true) {
                        try {
                            release.await();
                            break;
                        } catch (InterruptedException ignored) {
                            // ignores its interrupt, as some client libraries do
                        }
                    }
                    stubbornReturned.set(true);
                }
                case "four seconds" -> sleep(4_000);
                default -> {
                    await().atMost(Duration.ofSeconds(4)).until(() -> outcomes(ids.get(0)).contains("expired"));
                    sleep(1_500); // longer than a lease: the shared claim is renewed after the let-go
                }
            }
        }, QueueOptions.defaults().withLease(Duration.ofSeconds(1)).withTimeout(Duration.ofSeconds(5))
                .withConcurrency(2).withPrefetch(1).withBatchSize(3)).build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(ids.get(2))));
            assertThat(stubbornReturned).as("the stubborn handler still runs").isFalse();
            assertThat(abandoned).hasValue(1);
            assertThat(jdbc.queryForObject("SELECT count(DISTINCT claim_token) FROM workrow_outcome", Integer.class))
                    .as("the three shared one claim").isEqualTo(1);
            release.countDown();
        }
        assertThat(outcomes(ids.get(0))).containsExactly("expired");
        assertThat(status(ids.get(0))).as("its only attempt spent").isEqualTo("dead");
        assertThat(jdbc.queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class, ids.get(0)))
                .startsWith("lease expired while held by ");
        assertThat(outcomes(ids.get(1))).containsExactly("completed");
        assertThat(outcomes(ids.get(2))).containsExactly("completed");
        assertThat(swept).as("no claim expired").hasValue(0);
    }

    /**
     * Without the cancel's notification (listen-notify off), the claim's renewal is what tells the
     * runtime: it reports the cancelled job's position dropped, and renews the rest of the claim.
     */
    @Test
    void aCancelledRunningJobIsInterruptedByItsClaimsRenewalWhileItsBatchMateRunsOn() throws Exception {
        List<Long> ids = enqueue("mail", 3, "to cancel", "batch-mate");
        CountDownLatch bothRunning = new CountDownLatch(2);
        CountDownLatch mateMayFinish = new CountDownLatch(1);
        Map<String, Boolean> toldCancelled = new ConcurrentHashMap<>();
        Map<JobOutcome, AtomicInteger> handled = new ConcurrentHashMap<>();
        QueueMetrics metrics = countingOutcomes(handled);
        try (WorkerRuntime runtime = runtime().listenNotify(false).metrics(metrics).handler("mail", Task.class,
                (task, job) -> {
            bothRunning.countDown();
            try {
                if (task.name().equals("to cancel")) {
                    Thread.sleep(30_000);
                } else {
                    mateMayFinish.await();
                }
            } catch (InterruptedException e) {
                toldCancelled.put(task.name(), job.isCancelled());
                throw e;
            }
        }, QueueOptions.defaults().withLease(Duration.ofSeconds(1)).withConcurrency(2)).build()) {
            runtime.start();
            assertThat(bothRunning.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(store.cancel("mail", ids.get(0))).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> toldCancelled.containsKey("to cancel"));
            sleep(1_500); // the batch-mate outlives its claim's lease, renewed without the cancelled job
            mateMayFinish.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(ids.get(1))));
        }
        assertThat(toldCancelled).containsExactly(Map.entry("to cancel", true));
        assertThat(status(ids.get(0))).isEqualTo("cancelled");
        assertThat(handled.get(JobOutcome.CANCELLED)).hasValue(1);
        assertThat(handled.get(JobOutcome.SUCCESS)).hasValue(1);
        assertThat(swept).hasValue(0);
    }

    /**
     * A claim of one job whose job is cancelled keeps its row with the position dropped, so the
     * renewal reports a cancel rather than a lost claim; then the holder renews it no more and the
     * sweeper deletes it, with nothing to recover.
     */
    @Test
    void aCancelledJobAloneInItsClaimIsToldCancelledNotLost() throws Exception {
        long id = enqueue("mail", 3, "alone").get(0);
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean toldCancelled = new AtomicBoolean();
        Map<JobOutcome, AtomicInteger> handled = new ConcurrentHashMap<>();
        QueueMetrics metrics = countingOutcomes(handled);
        try (WorkerRuntime runtime = runtime().listenNotify(false).metrics(metrics).handler("mail", Task.class,
                (task, job) -> {
                    running.countDown();
                    try {
                        Thread.sleep(30_000);
                    } catch (InterruptedException e) {
                        toldCancelled.set(job.isCancelled());
                        throw e;
                    }
                }, QueueOptions.defaults().withLease(Duration.ofSeconds(1)).withConcurrency(1).withBatchSize(1))
                .build()) {
            runtime.start();
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(store.cancel("mail", id)).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> handled.containsKey(JobOutcome.CANCELLED));
            await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM workrow_claim", Integer.class) == 0);
        }
        assertThat(toldCancelled).isTrue();
        assertThat(handled).doesNotContainKey(JobOutcome.LEASE_LOST);
        assertThat(status(id)).isEqualTo("cancelled");
        assertThat(outcomes(id)).containsExactly("cancelled");
    }

    /**
     * An operator's session holds the claim rows locked (a {@code SELECT ... FOR UPDATE} left open
     * in psql) for three leases while the handlers finish: the ends are refused as busy and sent
     * again, the renewals skip the rows but vouch for them, so the sweeper takes nothing, and every
     * job completes once, when the session ends.
     */
    @Test
    void anOperatorsSessionHoldingTheClaimsForThreeLeasesDelaysTheEndsAndRunsNothingTwice() throws Exception {
        List<Long> ids = enqueue("mail", 3, "a", "b", "c", "d");
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        CountDownLatch allRunning = new CountDownLatch(4);
        CountDownLatch locked = new CountDownLatch(1);
        try (WorkerRuntime runtime = runtime().handler("mail", Task.class, (task, job) -> {
            runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
            allRunning.countDown();
            locked.await();
        }, QueueOptions.defaults().withLease(Duration.ofSeconds(1)).withConcurrency(4)).build();
                Connection operator = database.dataSource().getConnection()) {
            runtime.start();
            assertThat(allRunning.await(10, TimeUnit.SECONDS)).isTrue();
            operator.setAutoCommit(false);
            try (Statement statement = operator.createStatement()) {
                statement.execute("SELECT * FROM workrow_claim FOR UPDATE");
            }
            locked.countDown();
            sleep(3_000);
            assertThat(ids).allSatisfy(id -> assertThat(status(id)).isEqualTo("running"));
            operator.rollback();
            await().atMost(Duration.ofSeconds(10)).until(() -> ids.stream().allMatch(id -> "completed".equals(status(id))));
        }
        assertThat(runs).hasSize(4).allSatisfy((id, count) -> assertThat(count).hasValue(1));
        assertThat(swept).hasValue(0);
    }

    @Test
    void aTransactionalHandlersWritesCommitWithItsCompletionOnAClaimOfItsOwn() {
        List<Long> ids = enqueue("payments", 3, "p-1", "p-2", "p-3");
        HandlerTransaction inTransaction = LocalTransactions.on(database.dataSource());
        try (WorkerRuntime runtime = runtime().handler(new HandlerRegistration("payments", Task.class,
                (task, job) -> jdbc.update("INSERT INTO ledger VALUES (?)", ((Task) task).name()),
                QueueOptions.defaults().withConcurrency(3), inTransaction, "ledger.record(Task)")).build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> ids.stream().allMatch(id -> "completed".equals(status(id))));
        }
        assertThat(jdbc.queryForList("SELECT reference FROM ledger ORDER BY reference", String.class))
                .containsExactly("p-1", "p-2", "p-3");
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT claim_token) FROM workrow_outcome", Integer.class))
                .as("one claim per job").isEqualTo(3);
    }
}

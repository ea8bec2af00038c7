package io.workrow.queue.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.QueueHandler;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Whole application contexts with real handlers against PostgreSQL. */
class WorkrowApplicationTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(WorkrowAutoConfiguration.class,
                    WorkrowWorkerAutoConfiguration.class, WorkrowMaintenanceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                    JacksonAutoConfiguration.class))
            .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
            .withBean(Recorder.class)
            .withPropertyValues("workrow.poll-interval=100ms");

    record Receipt(long orderId, String email) {
    }

    record Item(String sku, int quantity) {
    }

    record Entry(String reference, boolean loseLease) {
    }

    /** What handlers saw, for the tests to check. */
    static class Recorder {
        final List<Object> payloads = new CopyOnWriteArrayList<>();
        final List<Boolean> inTransaction = new CopyOnWriteArrayList<>();
        final List<Instant> dueTimes = new CopyOnWriteArrayList<>();
        final AtomicInteger running = new AtomicInteger();
        final AtomicInteger mostRunning = new AtomicInteger();
        final CountDownLatch blockedStarted = new CountDownLatch(1);
    }

    static class TypedHandlers {
        private final Recorder recorder;

        TypedHandlers(Recorder recorder) {
            this.recorder = recorder;
        }

        @QueueHandler("typed")
        void receipt(Receipt receipt, JobContext job) {
            recorder.payloads.add(receipt);
            recorder.inTransaction.add(TransactionSynchronizationManager.isActualTransactionActive());
        }
    }

    @Transactional
    static class ProxiedHandlers {
        private final Recorder recorder;

        ProxiedHandlers(Recorder recorder) {
            this.recorder = recorder;
        }

        @QueueHandler("generic")
        public void items(List<Item> items) {
            recorder.payloads.add(items);
            recorder.inTransaction.add(TransactionSynchronizationManager.isActualTransactionActive());
        }
    }

    static class TunedHandlers {
        private final Recorder recorder;

        TunedHandlers(Recorder recorder) {
            this.recorder = recorder;
        }

        @QueueHandler("limited")
        void slow(Receipt receipt) throws InterruptedException {
            int now = recorder.running.incrementAndGet();
            recorder.mostRunning.accumulateAndGet(now, Math::max);
            Thread.sleep(150);
            recorder.running.decrementAndGet();
        }

        @QueueHandler("flaky")
        void failing(Receipt receipt, JobContext job) {
            recorder.dueTimes.add(job.runAt());
            throw new IllegalStateException("mail server down");
        }
    }

    static class LedgerHandlers {
        private final JdbcTemplate jdbc;
        private final TransactionTemplate separate;

        LedgerHandlers(DataSource dataSource) {
            this.jdbc = new JdbcTemplate(dataSource);
            this.separate = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            this.separate.setPropagationBehavior(TransactionTemplate.PROPAGATION_REQUIRES_NEW);
        }

        @QueueHandler(value = "ledger", transactional = true)
        void record(Entry entry, JobContext job) {
            jdbc.update("INSERT INTO ledger (reference) VALUES (?)", entry.reference());
            if (entry.loseLease()) {
                // Another node's sweeper takes the job away while this handler's transaction is open.
                separate.executeWithoutResult(status -> database.rows().killRunning(job.id()));
            }
        }
    }

    static class BlockingHandlers {
        private final Recorder recorder;

        BlockingHandlers(Recorder recorder) {
            this.recorder = recorder;
        }

        @QueueHandler("blocking")
        void block(Receipt receipt) throws InterruptedException {
            recorder.blockedStarted.countDown();
            Thread.sleep(60_000);
        }
    }

    record Total(long orderId, int cents) {
    }

    /** Handlers whose return value is the job's result, plain and inside a transactional proxy. */
    static class ResultHandlers {

        @QueueHandler("totals")
        Total total(Receipt receipt) {
            return new Total(receipt.orderId(), (int) receipt.orderId() * 100);
        }

        @QueueHandler(value = "ledger-totals", transactional = true)
        Total recorded(Entry entry, JobContext job) {
            return new Total(job.id(), entry.reference().length());
        }
    }

    @BeforeAll
    static void createLedger() {
        database.jdbc().execute("CREATE TABLE ledger (reference text PRIMARY KEY)");
    }

    @BeforeEach
    void clean() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM ledger");
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }

    private String status(long id) {
        return (String) row(id).get("status");
    }

    @Test
    void handlersReceiveTypedPayloadsAlsoThroughATransactionalProxy() {
        runner.withBean(TypedHandlers.class).withBean(ProxiedHandlers.class).run(context -> {
            assertThat(AopUtils.isAopProxy(context.getBean(ProxiedHandlers.class))).isTrue();
            JobQueue jobQueue = context.getBean(JobQueue.class);
            long receipt = jobQueue.enqueue("typed", new Receipt(9182, "ada@example.com"));
            long items = jobQueue.enqueue("generic", List.of(new Item("book", 2), new Item("pen", 1)));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> "completed".equals(status(receipt)) && "completed".equals(status(items)));

            Recorder recorder = context.getBean(Recorder.class);
            assertThat(recorder.payloads).containsExactlyInAnyOrder(new Receipt(9182, "ada@example.com"),
                    List.of(new Item("book", 2), new Item("pen", 1)));
            // The plain handler runs with no transaction; the proxied one inside its bean's own.
            assertThat(recorder.inTransaction).containsExactlyInAnyOrder(false, true);
        });
    }

    @Test
    void aQueueHandlerMethodsReturnValueIsItsJobsResultAlsoInItsOwnTransaction() {
        runner.withBean(ResultHandlers.class).withPropertyValues("workrow.max-result-size=1KB").run(context -> {
            JobQueue jobQueue = context.getBean(JobQueue.class);
            long total = jobQueue.enqueue("totals", new Receipt(7, "ada@example.com"));
            long recorded = jobQueue.enqueue("ledger-totals", new Entry("abc", false));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> "completed".equals(status(total)) && "completed".equals(status(recorded)));

            assertThat(jobQueue.result(total, Total.class)).contains(new Total(7, 700));
            assertThat(jobQueue.result(recorded, Total.class)).contains(new Total(recorded, 3));
        });
    }

    @Test
    void perQueuePropertiesTakeEffect() {
        runner.withBean(TunedHandlers.class)
                .withPropertyValues("workrow.queues.limited.concurrency=2",
                        "workrow.queues.flaky.max-attempts=3",
                        "workrow.queues.flaky.backoff.initial=200ms",
                        "workrow.queues.flaky.backoff.jitter=0")
                .run(context -> {
                    JobQueue jobQueue = context.getBean(JobQueue.class);
                    List<Long> limited = jobQueue.enqueueAll(java.util.stream.IntStream.range(0, 8)
                            .mapToObj(i -> JobRequest.of("limited", new Receipt(i, "x"))).toList());
                    long flaky = jobQueue.enqueue("flaky", new Receipt(1, "y"));
                    await().atMost(Duration.ofSeconds(20)).until(() -> "dead".equals(status(flaky))
                            && limited.stream().allMatch(id -> "completed".equals(status(id))));

                    Recorder recorder = context.getBean(Recorder.class);
                    assertThat(recorder.mostRunning).hasValue(2);
                    assertThat(row(flaky).get("attempts")).isEqualTo(3);
                    assertThat(row(flaky).get("max_attempts")).isEqualTo(3);
                    assertThat(recorder.dueTimes).hasSize(3);
                    assertThat(Duration.between(recorder.dueTimes.get(0), recorder.dueTimes.get(1)))
                            .isGreaterThanOrEqualTo(Duration.ofMillis(200));
                    assertThat(Duration.between(recorder.dueTimes.get(1), recorder.dueTimes.get(2)))
                            .isGreaterThanOrEqualTo(Duration.ofMillis(400));
                });
    }

    @Test
    void transactionalHandlerCommitsItsRowWithTheCompletion() {
        runner.withBean(LedgerHandlers.class).run(context -> {
            long id = context.getBean(JobQueue.class).enqueue("ledger", new Entry("kept", false));
            await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(id)));
            assertThat(database.jdbc().queryForList("SELECT reference FROM ledger", String.class))
                    .containsExactly("kept");
        });
    }

    @Test
    void transactionalHandlerThatLosesItsLeaseLeavesNoRowBehind() {
        runner.withBean(LedgerHandlers.class).run(context -> {
            long id = context.getBean(JobQueue.class).enqueue("ledger", new Entry("lost", true));
            await().atMost(Duration.ofSeconds(10)).until(() -> "dead".equals(status(id))
                    && context.getBean(io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle.class)
                            .runtime().inFlightCount() == 0);
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM ledger", Integer.class)).isZero();
        });
    }

    @Test
    void poisonPayloadIsDeadWithTheReasonAndOtherJobsStillRun() {
        runner.withBean(TypedHandlers.class).run(context -> {
            // A row no Receipt can be read from, as a producer of another version could have written.
            long poison = context.getBean(JobQueue.class).enqueue(JobRequest.of("typed", new Receipt(0, "x@example.com"))
                    .delay(Duration.ofHours(1)));
            database.rows().setPayload(poison, "{\"orderId\": {\"nested\": true}}");
            database.rows().makeDue(poison, Duration.ZERO);
            long good = context.getBean(JobQueue.class).enqueue("typed", new Receipt(1, "ok@example.com"));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> "dead".equals(status(poison)) && "completed".equals(status(good)));
            assertThat((String) row(poison).get("last_error")).contains("Payload is not a valid")
                    .contains("Receipt");
        });
    }

    @Test
    void anErrorDescriberBeanRedactsWhatReachesLastError() {
        runner.withBean(TunedHandlers.class)
                .withBean(io.workrow.queue.worker.ErrorDescriber.class,
                        () -> error -> error.getClass().getSimpleName() + ": [redacted]")
                .withPropertyValues("workrow.queues.flaky.max-attempts=1")
                .run(context -> {
                    long id = context.getBean(JobQueue.class).enqueue("flaky", new Receipt(1, "secret@example.com"));
                    await().atMost(Duration.ofSeconds(10)).until(() -> "dead".equals(status(id)));
                    assertThat(row(id).get("last_error")).isEqualTo("IllegalStateException: [redacted]");
                });
    }

    @Test
    void contextShutdownWithHandlersInFlightReleasesHeldJobs() throws Exception {
        long[] id = new long[1];
        runner.withBean(BlockingHandlers.class).withPropertyValues("workrow.shutdown-timeout=300ms").run(context -> {
            id[0] = context.getBean(JobQueue.class).enqueue("blocking", new Receipt(1, "z"));
            assertThat(context.getBean(Recorder.class).blockedStarted.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(status(id[0])).isEqualTo("running");
        });
        Map<String, Object> released = row(id[0]);
        assertThat(released.get("status")).isEqualTo("pending");
        assertThat(released.get("claimed_by")).isNull();
        assertThat(released.get("lease_expires_at")).isNull();
    }

    @Test
    void aTransactionalHandlerWhoseManagerRunsAnotherDataSourceFailsStartUpNamingIt() {
        runner.withBean(LedgerHandlers.class)
                .withBean("reportingTransactionManager", org.springframework.transaction.PlatformTransactionManager.class,
                        () -> new DataSourceTransactionManager(new DelegatingDataSource(database.dataSource())))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("LedgerHandlers.record(Entry, JobContext) is transactional")
                            .hasMessageContaining("no PlatformTransactionManager manages Workrow's DataSource");
                });
    }

    static class LazyHandlers {
        private final Recorder recorder;

        LazyHandlers(Recorder recorder) {
            this.recorder = recorder;
        }

        @QueueHandler("lazy")
        void handle(Receipt receipt) {
            recorder.payloads.add(receipt);
        }
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class LazyAndScopedHandlerConfiguration {

        @org.springframework.context.annotation.Bean
        @org.springframework.context.annotation.Lazy
        LazyHandlers lazyHandlers(Recorder recorder) {
            return new LazyHandlers(recorder);
        }

        @org.springframework.context.annotation.Bean
        @org.springframework.context.annotation.Scope(scopeName = "prototype",
                proxyMode = org.springframework.context.annotation.ScopedProxyMode.TARGET_CLASS)
        ScopedHandlers scopedHandlers(Recorder recorder) {
            return new ScopedHandlers(recorder);
        }
    }

    static class ScopedHandlers {
        private final Recorder recorder;

        ScopedHandlers(Recorder recorder) {
            this.recorder = recorder;
        }

        @QueueHandler("scoped")
        public void handle(Receipt receipt) {
            recorder.payloads.add(receipt);
        }
    }

    @Test
    void lazyHandlerBeansAreFoundAndScopedProxiesCountOnce() {
        runner.withUserConfiguration(LazyAndScopedHandlerConfiguration.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    JobQueue jobQueue = context.getBean(JobQueue.class);
                    long lazy = jobQueue.enqueue("lazy", new Receipt(1, "lazy"));
                    long scopedA = jobQueue.enqueue("scoped", new Receipt(2, "a"));
                    long scopedB = jobQueue.enqueue("scoped", new Receipt(3, "b"));
                    await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(lazy))
                            && "completed".equals(status(scopedA)) && "completed".equals(status(scopedB)));
                    assertThat(context.getBean(io.workrow.queue.spring.handler.QueueHandlerDiscoverer.class).handlers())
                            .extracting(io.workrow.queue.spring.handler.HandlerMethod::queue)
                            .containsExactlyInAnyOrder("lazy", "scoped");
                });
    }
}

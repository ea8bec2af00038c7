package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobFunction;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

class TransactionalHandlerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JdbcJobQueue jobQueue;

    record Payment(String reference) {
    }

    @BeforeAll
    static void createLedger() {
        database.jdbc().execute("CREATE TABLE ledger (reference text PRIMARY KEY)");
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM ledger");
        jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    }

    private WorkerRuntime runtime(io.workrow.queue.JobHandler<Object> handler) {
        HandlerTransaction inTransaction = LocalTransactions.on(database.dataSource());
        return WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(100))
                .handler(new HandlerRegistration("payments", Payment.class, JobFunction.of(handler), QueueOptions.defaults(),
                        inTransaction, "ledger.record(Payment)"))
                .build();
    }

    private String status(long id) {
        return database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }

    private int ledgerRows() {
        return database.jdbc().queryForObject("SELECT count(*) FROM ledger", Integer.class);
    }

    @Test
    void handlerWritesAndCompletionCommitTogether() {
        JdbcTemplate jdbc = database.jdbc();
        long id = jobQueue.enqueue("payments", new Payment("p-1"));
        try (WorkerRuntime runtime = runtime((payment, job) ->
                jdbc.update("INSERT INTO ledger VALUES (?)", ((Payment) payment).reference()))) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(id)));
        }
        assertThat(ledgerRows()).isEqualTo(1);
    }

    @Test
    void handlerThatLosesItsLeaseLeavesNoRowBehind() {
        JdbcTemplate jdbc = database.jdbc();
        TransactionTemplate separate = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
        separate.setPropagationBehavior(TransactionTemplate.PROPAGATION_REQUIRES_NEW);
        long id = jobQueue.enqueue("payments", new Payment("p-2"));
        try (WorkerRuntime runtime = runtime((payment, job) -> {
            if (job.attempt() > 1) {
                throw new IllegalStateException("stop here: only the first attempt matters");
            }
            jdbc.update("INSERT INTO ledger VALUES (?)", ((Payment) payment).reference());
            // Another node's sweeper takes the job away while this handler still runs.
            separate.executeWithoutResult(status -> database.rows().killRunning(job.id()));
        })) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> runtime.inFlightCount() == 0
                    && "dead".equals(status(id)));
        }
        assertThat(ledgerRows()).isZero();
        assertThat(status(id)).isEqualTo("dead");
    }

    @Test
    void failingTransactionalHandlerRollsBackItsWritesAndRetries() {
        JdbcTemplate jdbc = database.jdbc();
        long id = jobQueue.enqueue("payments", new Payment("p-3"));
        try (WorkerRuntime runtime = runtime((payment, job) -> {
            jdbc.update("INSERT INTO ledger VALUES (?)", ((Payment) payment).reference() + "-" + job.attempt());
            throw new IllegalStateException("downstream refused");
        })) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> database.jdbc().queryForObject(
                    "SELECT last_error IS NOT NULL FROM workrow_job WHERE id = ?", Boolean.class, id));
        }
        assertThat(ledgerRows()).isZero();
    }

    @Test
    void aStepSavedInsideTheHandlersTransactionSurvivesItsRollback() {
        long id = jobQueue.enqueue("payments", new Payment("step"));
        WorkerRuntime runtime = runtime((payment, job) -> {
            if (job.attempt() == 1) {
                job.saveStep("charged");
                throw new IllegalStateException("mail server down");
            }
            assertThat(job.step()).isEqualTo("charged");
        });
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(15)).until(() -> "completed".equals(status(id)));
            assertThat(database.jdbc().queryForObject("SELECT step FROM workrow_job WHERE id = ?", String.class, id))
                    .isEqualTo("charged");
        } finally {
            runtime.stop();
        }
    }

    @Test
    void anExtendedLeaseIsSeenByOtherSessionsAndCancelDoesNotWaitOnTheHandler() throws Exception {
        long id = jobQueue.enqueue("payments", new Payment("hang"));
        java.util.concurrent.CountDownLatch extended = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean sawCancel = new java.util.concurrent.atomic.AtomicBoolean();
        WorkerRuntime runtime = runtime((payment, job) -> {
            job.extendLease(Duration.ofHours(2));
            extended.countDown();
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                sawCancel.set(job.isCancelled());
                throw e;
            }
        });
        runtime.start();
        try {
            assertThat(extended.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(database.jdbc().queryForObject("SELECT lease_expires_at > now() + interval '119 minutes'"
                    + " FROM workrow_job WHERE id = ?", Boolean.class, id)).as("committed on its own").isTrue();
            long before = System.nanoTime();
            assertThat(new io.workrow.queue.client.JdbcQueueAdmin(database.store()).cancel("payments", id)).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(2));
            await().atMost(Duration.ofSeconds(5)).untilTrue(sawCancel);
            assertThat(status(id)).isEqualTo("cancelled");
        } finally {
            runtime.stop();
        }
    }
}

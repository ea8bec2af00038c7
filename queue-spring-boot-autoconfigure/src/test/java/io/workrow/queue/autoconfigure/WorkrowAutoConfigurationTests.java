package io.workrow.queue.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueHandler;
import io.workrow.queue.RecurringJob;
import io.workrow.queue.RecurringStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.spring.handler.QueueHandlerDefinitionException;
import io.workrow.queue.spring.lifecycle.MaintenanceLifecycle;
import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.WriteOnceStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.BreakerOptions;
import io.workrow.queue.worker.FairnessMode;
import io.workrow.queue.worker.FairnessOptions;
import io.workrow.queue.worker.KeyOrdering;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.RetryBackoff;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.datasource.DelegatingDataSource;

class WorkrowAutoConfigurationTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = WorkrowTestDatabase.empty();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(WorkrowAutoConfiguration.class,
                    WorkrowWorkerAutoConfiguration.class, WorkrowMaintenanceAutoConfiguration.class));

    /** The test database, without the pool's close(): each context would otherwise close it. */
    private ApplicationContextRunner withDatabase() {
        return runner.withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()));
    }

    record Receipt(long orderId) {
    }

    static class Receipts {
        @QueueHandler("send-receipt")
        void send(Receipt receipt, JobContext job) {
        }
    }

    static class Mailer {
        @QueueHandler("send-receipt")
        void onReceipt(Receipt receipt) {
        }
    }

    static class NoPayload {
        @QueueHandler("send-receipt")
        void send(JobContext job) {
        }
    }

    static class TwoPayloads {
        @QueueHandler("send-receipt")
        void send(Receipt receipt, String other) {
        }
    }

    @Test
    void providesProducerWorkersAndMaintenanceWithADataSource() {
        withDatabase().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(JobQueue.class).hasSingleBean(QueueAdmin.class)
                    .hasSingleBean(WriteOnceStore.class).hasSingleBean(PayloadCodec.class)
                    .hasSingleBean(WorkerRuntimeLifecycle.class).hasSingleBean(MaintenanceLifecycle.class);
            assertThat(context.getBean(WorkerRuntimeLifecycle.class).isRunning()).isTrue();
            // No @QueueHandler here: no LISTEN connection is held for nothing.
            assertThat(context.getBean(WorkerRuntimeLifecycle.class).runtime().listenerDisconnectedFor()).isZero();
            assertThat(database.jdbc().queryForObject(
                    "SELECT count(*) FROM pg_views WHERE schemaname = 'public' AND viewname = 'workrow_job'",
                    Integer.class)).isEqualTo(1);
        });
    }

    @Test
    void backsOffWithoutDataSource() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(JobQueue.class).doesNotHaveBean(WorkerRuntimeLifecycle.class);
        });
    }

    @Test
    void userBeansWin() {
        withDatabase()
                .withBean("myJobQueue", JobQueue.class,
                        () -> new JdbcJobQueue(new WriteOnceStore(database.dataSource(), database.schema()),
                                io.workrow.queue.payload.JacksonPayloadCodec.withDefaultMapper()))
                .run(context -> {
                    assertThat(context).hasSingleBean(JobQueue.class);
                    assertThat(context).hasBean("myJobQueue");
                });
    }

    @Test
    void disabledKeepsTheProducerAndTurnsWorkersAndMaintenanceOff() {
        withDatabase().withPropertyValues("workrow.enabled=false").withBean(Receipts.class).run(context -> {
            assertThat(context).hasSingleBean(JobQueue.class).hasSingleBean(QueueAdmin.class);
            assertThat(context).doesNotHaveBean(WorkerRuntimeLifecycle.class)
                    .doesNotHaveBean(MaintenanceLifecycle.class);
            long id = context.getBean(JobQueue.class).enqueue(JobRequest.of("send-receipt", new Receipt(1)));
            assertThat(id).isPositive();
        });
    }

    @Test
    void autoStartupOffLeavesTheWorkersStoppedForDrainsUntilStartedByHand() {
        withDatabase().withPropertyValues("workrow.auto-startup=false").withBean(Receipts.class).run(context -> {
            WorkerRuntimeLifecycle workers = context.getBean(WorkerRuntimeLifecycle.class);
            assertThat(workers.isAutoStartup()).isFalse();
            assertThat(workers.isRunning()).isFalse();
            assertThat(workers.runtime()).isNull();
            long id = context.getBean(JobQueue.class).enqueue(JobRequest.of("send-receipt", new Receipt(7)));

            assertThat(workers.runtimeForDrain().drain("send-receipt"))
                    .singleElement().matches(run -> run.id() == id && run.succeeded());

            workers.start();
            assertThat(workers.isRunning()).isTrue();
            assertThat(workers.runtime().isHealthy()).isTrue();
            assertThatThrownBy(workers::runtimeForDrain)
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("workrow.auto-startup=false");
        });
    }

    @Test
    void migrationsCanBeTurnedOffAndAnUnmigratedSchemaThenFailsStartUpClearly() {
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=untouched",
                "workrow.enabled=false").run(context -> {
            assertThat(context).hasFailed().getFailure()
                    .hasStackTraceContaining("schema untouched is not migrated to version 13");
            assertThat(database.jdbc().queryForObject(
                    "SELECT count(*) FROM pg_namespace WHERE nspname = 'untouched'", Integer.class)).isZero();
        });
    }

    @Test
    void withMigrationsOffAStartUpOnASchemaLeftAtAnOlderVersionFailsNamingTheFix() {
        new io.workrow.queue.migration.WorkrowMigrations(database.dataSource(),
                io.workrow.queue.store.SqlIdentifier.of("schema", "held_back"))
                .upTo(io.workrow.queue.migration.WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=held_back",
                "workrow.enabled=false").run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("schema held_back is not migrated to version 13")
                        .hasStackTraceContaining("workrow.migrations.enabled=true"));
    }

    @Test
    void withMigrationsOffASchemaOnTheWriteOnceLayoutWithoutResultsFailsNamingTheVersion() {
        new io.workrow.queue.migration.WorkrowMigrations(database.dataSource(),
                io.workrow.queue.store.SqlIdentifier.of("schema", "no_results"))
                .upTo(io.workrow.queue.migration.WorkrowMigrations.WRITE_ONCE_VERSION).migrate();
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=no_results",
                "workrow.enabled=false").run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("schema no_results is not migrated to version 14")
                        .hasStackTraceContaining("workrow_outcome has no result column"));
    }

    @Test
    void withMigrationsOffASchemaWithoutDeadlinesFailsNamingVersion17() {
        new io.workrow.queue.migration.WorkrowMigrations(database.dataSource(),
                io.workrow.queue.store.SqlIdentifier.of("schema", "no_deadlines")).upTo("16").migrate();
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=no_deadlines",
                "workrow.enabled=false").run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("schema no_deadlines is not migrated to version 17")
                        .hasStackTraceContaining("workrow_job_data has no expires_at column"));
    }

    @Test
    void withMigrationsOffASchemaWithoutTheDeadlineTableFailsNamingVersion19() {
        new io.workrow.queue.migration.WorkrowMigrations(database.dataSource(),
                io.workrow.queue.store.SqlIdentifier.of("schema", "no_deadline_table")).upTo("18").migrate();
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=no_deadline_table",
                "workrow.enabled=false").run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("schema no_deadline_table is not migrated to version 19")
                        .hasStackTraceContaining("it has no workrow_deadline table"));
    }

    @Test
    void withMigrationsOffASchemaWithoutCapSharesFailsNamingVersion20() {
        new io.workrow.queue.migration.WorkrowMigrations(database.dataSource(),
                io.workrow.queue.store.SqlIdentifier.of("schema", "no_cap_shares")).upTo("19").migrate();
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=no_cap_shares",
                "workrow.enabled=false").run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("schema no_cap_shares is not migrated to version 20")
                        .hasStackTraceContaining("it has no workrow_cap_share table"));
    }

    @Test
    void withMigrationsOffTheApplicationsOwnMigrationBeanAppliesThemInWhateverOrderTheBeansAreMade() {
        withDatabase().withPropertyValues("workrow.migrations.enabled=false", "workrow.schema=applied_later",
                "workrow.enabled=false")
                .withBean("applicationMigrations", org.springframework.beans.factory.InitializingBean.class,
                        () -> () -> new io.workrow.queue.migration.WorkrowMigrations(database.dataSource(),
                                io.workrow.queue.store.SqlIdentifier.of("schema", "applied_later")).migrate())
                .run(context -> {
            assertThat(context).hasNotFailed();
            JobStore store = context.getBean(JobStore.class);
            assertThat(store).isInstanceOf(WriteOnceStore.class);
            long id = context.getBean(JobQueue.class).enqueue(JobRequest.of("late", java.util.Map.of("n", 1)));
            assertThat(database.jdbc().queryForObject("SELECT status FROM applied_later.workrow_job WHERE id = ?",
                    String.class, id)).isEqualTo("pending");
        });
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "workrow.queues.send-receipt.concurrency=0        | workrow.queues.send-receipt.concurrency     | 0",
            "workrow.queues.send-receipt.batch-size=-1        | workrow.queues.send-receipt.batch-size      | -1",
            "workrow.queues.send-receipt.prefetch=-1          | workrow.queues.send-receipt.prefetch        | -1",
            "workrow.defaults.prefetch=-3                     | workrow.defaults.prefetch                   | -3",
            "workrow.queues.pay.prefetch=8, workrow.queues.pay.breaker.enabled=true | workrow.queues.pay.prefetch | 8",
            "workrow.queues.reports.prefetch=8, workrow.queues.reports.fairness.mode=spaced | workrow.queues.reports.prefetch | 8",
            "workrow.queues.send-receipt.max-attempts=0       | workrow.queues.send-receipt.max-attempts    | 0",
            "workrow.queues.send-receipt.lease=-5s            | workrow.queues.send-receipt.lease           | PT-5S",
            "workrow.queues.send-receipt.backoff.multiplier=0.5 | workrow.queues.send-receipt.backoff.multiplier | 0.5",
            "workrow.queues.send-receipt.backoff.jitter=1.5   | workrow.queues.send-receipt.backoff.jitter  | 1.5",
            "workrow.defaults.concurrency=0                   | workrow.defaults.concurrency                | 0",
            "workrow.defaults.backoff.initial=0s              | workrow.defaults.backoff.initial            | PT0S",
            "workrow.defaults.backoff.max=10ms                | workrow.defaults.backoff.max                | PT0.01S",
            "workrow.poll-interval=-1s                        | workrow.poll-interval                       | PT-1S",
            "workrow.lease=0s                                 | workrow.lease                               | PT0S",
            "workrow.shutdown-timeout=-1s                     | workrow.shutdown-timeout                    | PT-1S",
            "workrow.sweeper.interval=0s                      | workrow.sweeper.interval                    | PT0S",
            "workrow.retention.dead=-1d                       | workrow.retention.dead                      | PT-24H",
            "workrow.schema=public; drop table x              | workrow.schema                              | public; drop table x",
            "workrow.queues.Send_Receipt.concurrency=1        | workrow.queues                              | Send_Receipt",
            "workrow.queues.send-receipt.timeout=0s           | workrow.queues.send-receipt.timeout         | PT0S",
            "workrow.queues.send-receipt.lease=500ms          | workrow.queues.send-receipt.lease           | PT0.5S",
            "workrow.statement-timeout=500ms                  | workrow.statement-timeout                   | PT0.5S",
            "workrow.max-result-size=0B                       | workrow.max-result-size                     | 0B",
            "workrow.queues.send-receipt.max-lease-expiries=0 | workrow.queues.send-receipt.max-lease-expiries | 0",
            "workrow.defaults.max-lease-expiries=-1           | workrow.defaults.max-lease-expiries         | -1",
            "workrow.defaults.max-snoozes=-1                  | workrow.defaults.max-snoozes                | -1",
            "workrow.queues.send-receipt.max-snoozes=-2       | workrow.queues.send-receipt.max-snoozes     | -2",
            "workrow.queues.partner.global-concurrency=0      | workrow.queues.partner.global-concurrency   | 0",
            "workrow.queues.partner.key-concurrency=0         | workrow.queues.partner.key-concurrency      | 0",
            "workrow.queues.partner.key-concurrency=2, workrow.queues.partner.ordered=true | workrow.queues.partner.key-concurrency | 2",
            "workrow.queues.partner.key-concurrency=2, workrow.queues.partner.prefetch=10 | workrow.queues.partner.prefetch | 10",
            "workrow.queues.send-receipt.breaker.failure-threshold=0 | workrow.queues.send-receipt.breaker.failure-threshold | 0",
            "workrow.queues.send-receipt.breaker.cooldown=0s  | workrow.queues.send-receipt.breaker.cooldown | PT0S",
            "workrow.queues.send-receipt.breaker.half-open-probes=0 | workrow.queues.send-receipt.breaker.half-open-probes | 0",
            "workrow.heartbeat-interval=0s                    | workrow.heartbeat-interval                  | PT0S",
            "workrow.queues.reports.fairness.mode=burst, workrow.queues.reports.fairness.rate-per-minute=0 | workrow.queues.reports.fairness.rate-per-minute | 0",
            "workrow.queues.reports.fairness.mode=weighted, workrow.queues.reports.ordered=true | workrow.queues.reports.fairness.mode | weighted",
            "workrow.schema=ssssssssssssssssssssssssssssssssssssssssssssssssssssssss | workrow.schema | ssssssssssssssssssssssssssssssssssssssssssssssssssssssss",
            "workrow.recurring.nightly.cron=every night, workrow.recurring.nightly.queue=reports | workrow.recurring.nightly.cron | every night",
            "workrow.recurring.nightly.queue=reports          | workrow.recurring.nightly.cron              | null",
            "workrow.recurring.nightly.cron=0 0 2 * * *, workrow.recurring.nightly.zone=Mars/Olympus, workrow.recurring.nightly.queue=reports | workrow.recurring.nightly.zone | Mars/Olympus",
            "workrow.recurring.nightly.cron=0 0 2 * * *       | workrow.recurring.nightly.queue             | null",
    })
    void invalidPropertyFailsStartUpNamingThePropertyAndValue(String property, String name, String value) {
        withDatabase().withPropertyValues(property.split(", ")).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("Property " + name + " with value '" + value + "' is invalid");
        });
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "workrow.recurring.nightly.queue=reports | workrow.recurring.nightly.queue | reports",
            "workrow.recurring.nightly.queue=send-receipt, workrow.recurring.nightly.payload={\"orderId\":\"soon\"} | workrow.recurring.nightly.payload | {\"orderId\":\"soon\"}",
    })
    void aRecurringJobWhoseQueueOrPayloadNoHandlerTakesFailsStartUpNamingTheProperty(String property, String name,
            String value) {
        withDatabase().withBean(Receipts.class)
                .withPropertyValues("workrow.recurring.nightly.cron=0 0 2 * * *")
                .withPropertyValues(property.split(", ")).run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("Property " + name + " with value '" + value + "' is invalid");
                });
    }

    @Test
    void aRecurringJobFromPropertiesIsDeclaredAtStartWithItsSchedule() {
        withDatabase().withBean(Receipts.class)
                .withPropertyValues("workrow.recurring.declared.cron=0 0 2 * * *",
                        "workrow.recurring.declared.zone=Europe/Berlin", "workrow.recurring.declared.queue=send-receipt",
                        "workrow.recurring.declared.payload={\"orderId\":7}").run(context -> {
                    assertThat(context).hasNotFailed();
                    // Declared by the runtime's recurring thread as it starts.
                    await().atMost(Duration.ofSeconds(10)).until(() -> recurring(context, "declared").isPresent());
                    RecurringStatus entry = recurring(context, "declared").orElseThrow();
                    assertThat(entry.queue()).isEqualTo("send-receipt");
                    assertThat(entry.zone()).isEqualTo("Europe/Berlin");
                    assertThat(entry.lastTick()).isNull();
                    assertThat(entry.nextTick().atZone(ZoneId.of("Europe/Berlin")).getHour()).isEqualTo(2);
                });
    }

    @Test
    void aJobOfAPausedQueueThatPassesItsDeadlineIsCancelledByTheApplicationsMaintenance() {
        withDatabase().withBean(Receipts.class).withPropertyValues("workrow.sweeper.interval=200ms").run(context -> {
            assertThat(context).hasNotFailed();
            context.getBean(QueueAdmin.class).pause("send-receipt", "partner down");
            java.time.Instant now = database.jdbc().queryForObject("SELECT now()", java.sql.Timestamp.class)
                    .toInstant();
            long id = context.getBean(JobQueue.class).enqueue(JobRequest.of("send-receipt", new Receipt(9))
                    .expiresAt(now.plusMillis(500)));

            await().atMost(Duration.ofSeconds(10)).until(() -> "cancelled".equals(database.jdbc().queryForObject(
                    "SELECT status FROM workrow_job WHERE id = ?", String.class, id)));
            assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class,
                    id)).startsWith("expired: ");
            context.getBean(QueueAdmin.class).resume("send-receipt");
        });
    }

    @Test
    void aRecurringJobBeanIsDeclaredBesideThoseFromProperties() {
        withDatabase().withBean(Receipts.class)
                .withBean("weeklyReceipt", RecurringJob.class,
                        () -> RecurringJob.of("weekly", "0 0 3 * * MON", "send-receipt", new Receipt(1)).withoutCatchUp())
                .withPropertyValues("workrow.recurring.nightly.cron=0 0 2 * * *",
                        "workrow.recurring.nightly.queue=send-receipt",
                        "workrow.recurring.nightly.payload={\"orderId\":7}").run(context -> {
                    assertThat(context).hasNotFailed();
                    await().atMost(Duration.ofSeconds(10)).until(() -> recurring(context, "weekly").isPresent()
                            && recurring(context, "nightly").isPresent());
                    assertThat(recurring(context, "weekly").orElseThrow().cron()).isEqualTo("0 0 3 * * MON");
                });
    }

    @Test
    void aRecurringJobBeanAndPropertyOfOneNameFailStartUpNamingIt() {
        withDatabase().withBean(Receipts.class)
                .withBean("nightlyReceipt", RecurringJob.class,
                        () -> RecurringJob.of("nightly", "0 0 3 * * *", "send-receipt", new Receipt(1)))
                .withPropertyValues("workrow.recurring.nightly.cron=0 0 2 * * *",
                        "workrow.recurring.nightly.queue=send-receipt",
                        "workrow.recurring.nightly.payload={\"orderId\":7}").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("Property workrow.recurring with value 'nightly' is invalid");
                });
    }

    private static Optional<RecurringStatus> recurring(ApplicationContext context, String name) {
        return context.getBean(QueueAdmin.class).recurringJobs().stream().filter(entry -> entry.name().equals(name))
                .findFirst();
    }

    @Test
    void twoHandlersForOneQueueFailNamingBothBeansAndMethods() {
        withDatabase().withBean("receipts", Receipts.class).withBean("mailer", Mailer.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(QueueHandlerDefinitionException.class)
                    .hasMessage("Two @QueueHandler methods for queue 'send-receipt': receipts.send(Receipt, JobContext)"
                            + " and mailer.onReceipt(Receipt). A queue has exactly one handler.");
        });
    }

    @Test
    void handlerWithoutPayloadFailsNamingBeanAndMethod() {
        withDatabase().withBean("noPayload", NoPayload.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(QueueHandlerDefinitionException.class)
                    .hasMessageContaining("noPayload.send(JobContext)").hasMessageContaining("no payload parameter");
        });
    }

    @Test
    void handlerWithTwoPayloadsFailsNamingBeanAndMethod() {
        withDatabase().withBean("twoPayloads", TwoPayloads.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(QueueHandlerDefinitionException.class)
                    .hasMessageContaining("twoPayloads.send(Receipt, String)")
                    .hasMessageContaining("more than one payload parameter");
        });
    }

    @Test
    void propertyDefaultsAreTheEngineDefaults() {
        WorkrowProperties properties = new WorkrowProperties();
        WorkrowSettings settings = WorkrowSettings.of(properties);
        assertThat(settings.queueOptions("any")).isEqualTo(QueueOptions.defaults());
        assertThat(settings.maxAttempts("any")).isEqualTo(JdbcJobQueue.DEFAULT_MAX_ATTEMPTS);
        assertThat(settings.maxPayloadBytes()).isEqualTo(JdbcJobQueue.DEFAULT_MAX_PAYLOAD_BYTES);
        assertThat(settings.maxResultBytes()).isEqualTo(WorkerRuntime.Builder.DEFAULT_MAX_RESULT_BYTES);
        assertThat(properties.getPollInterval()).isEqualTo(WorkerRuntime.Builder.DEFAULT_POLL_INTERVAL);
        assertThat(properties.getShutdownTimeout()).isEqualTo(WorkerRuntime.Builder.DEFAULT_SHUTDOWN_TIMEOUT);
        assertThat(settings.queueOptions("any").backoff()).isEqualTo(RetryBackoff.DEFAULT);
    }

    @Test
    void queueSettingsOverrideDefaultsKeyByKey() {
        withDatabase().withPropertyValues("workrow.defaults.concurrency=3", "workrow.queues.fast.batch-size=50",
                "workrow.queues.fast.backoff.initial=5s", "workrow.lease=2m", "workrow.defaults.prefetch=10",
                "workrow.queues.fast.prefetch=100").run(context -> {
            WorkrowSettings settings = context.getBean(WorkrowSettings.class);
            QueueOptions fast = settings.queueOptions("fast");
            assertThat(fast.concurrency()).isEqualTo(3);
            assertThat(fast.batchSize()).isEqualTo(50);
            assertThat(fast.prefetch()).isEqualTo(100);
            assertThat(settings.queueOptions("other").prefetch()).isEqualTo(10);
            assertThat(fast.lease()).hasMinutes(2);
            assertThat(fast.backoff().initial()).hasSeconds(5);
            assertThat(fast.backoff().multiplier()).isEqualTo(2.0);
            assertThat(settings.queueOptions("other").batchSize()).isEqualTo(QueueOptions.DEFAULT_BATCH_SIZE);
            assertThat(List.copyOf(settings.configuredQueues())).containsExactly("fast");
        });
    }

    @Test
    void breakerAndLeaseExpiryLimitAreSetPerQueue() {
        withDatabase().withPropertyValues("workrow.defaults.max-lease-expiries=4",
                "workrow.queues.payments.max-lease-expiries=2",
                "workrow.queues.payments.breaker.failure-threshold=3", "workrow.queues.payments.breaker.cooldown=3s",
                "workrow.queues.mail.breaker.enabled=true",
                "workrow.queues.sms.breaker.failure-threshold=3", "workrow.queues.sms.breaker.enabled=false")
                .run(context -> {
                    WorkrowSettings settings = context.getBean(WorkrowSettings.class);
                    QueueOptions payments = settings.queueOptions("payments");
                    assertThat(payments.maxLeaseExpiries()).isEqualTo(2);
                    assertThat(payments.breaker()).isEqualTo(new BreakerOptions(3, java.time.Duration.ofSeconds(3), 1));
                    assertThat(settings.queueOptions("mail").breaker()).isEqualTo(BreakerOptions.defaults());
                    assertThat(settings.queueOptions("mail").maxLeaseExpiries()).isEqualTo(4);
                    assertThat(settings.queueOptions("sms").breaker()).isNull();
                    assertThat(settings.queueOptions("other").breaker()).isNull();
                    assertThat(settings.defaultQueueOptions().maxLeaseExpiries()).isEqualTo(4);
                });
    }

    @Test
    void maxSnoozesAndMaxAttemptsReachTheQueuesOptions() {
        withDatabase().withPropertyValues("workrow.defaults.max-snoozes=7", "workrow.queues.partner.max-snoozes=0",
                "workrow.queues.partner.max-attempts=9").run(context -> {
                    WorkrowSettings settings = context.getBean(WorkrowSettings.class);
                    assertThat(settings.queueOptions("partner").maxSnoozes()).isZero();
                    assertThat(settings.queueOptions("partner").maxAttempts()).isEqualTo(9);
                    assertThat(settings.queueOptions("other").maxSnoozes()).isEqualTo(7);
                    assertThat(settings.queueOptions("other").maxAttempts()).isEqualTo(5);
                    assertThat(settings.queueOptions("other").globalConcurrency()).isZero();
                });
        withDatabase().withPropertyValues("workrow.queues.partner.global-concurrency=5",
                "workrow.queues.partner.key-concurrency=2").run(context -> {
            QueueOptions partner = context.getBean(WorkrowSettings.class).queueOptions("partner");
            assertThat(partner.globalConcurrency()).isEqualTo(5);
            assertThat(partner.keyConcurrency()).isEqualTo(2);
            assertThat(partner.mostPrefetched()).as("a key-capped queue claims ahead nothing").isZero();
        });
        withDatabase().withPropertyValues("workrow.queues.partner.global-concurrency=5",
                "workrow.queues.none.global-concurrency=5", "workrow.queues.none.prefetch=0",
                "workrow.queues.fixed.global-concurrency=5", "workrow.queues.fixed.prefetch=10").run(context -> {
            WorkrowSettings settings = context.getBean(WorkrowSettings.class);
            assertThat(settings.queueOptions("partner").adaptsPrefetch()).as("a line holds no share of the cap")
                    .isTrue();
            assertThat(settings.queueOptions("none").mostPrefetched()).isZero();
            assertThat(settings.queueOptions("fixed").prefetch()).as("a fixed line too").isEqualTo(10);
        });
    }

    @Test
    void anUnsetPrefetchAdaptsExceptWhereALimitCountsClaims() {
        withDatabase().withPropertyValues("workrow.queues.pay.breaker.enabled=true",
                "workrow.queues.digest.fairness.mode=spaced", "workrow.queues.bulk.batch-size=40",
                "workrow.queues.fixed.prefetch=0").run(context -> {
            WorkrowSettings settings = context.getBean(WorkrowSettings.class);
            QueueOptions bulk = settings.queueOptions("bulk");
            assertThat(bulk.prefetch()).isEqualTo(QueueOptions.ADAPTIVE_PREFETCH);
            assertThat(bulk.adaptsPrefetch()).isTrue();
            assertThat(bulk.mostPrefetched()).as("two claims").isEqualTo(80);
            assertThat(settings.queueOptions("pay").adaptsPrefetch()).as("breaker").isFalse();
            assertThat(settings.queueOptions("pay").mostPrefetched()).isZero();
            assertThat(settings.queueOptions("digest").adaptsPrefetch()).as("spaced fairness").isFalse();
            assertThat(settings.queueOptions("fixed").adaptsPrefetch()).isFalse();
            assertThat(settings.queueOptions("fixed").mostPrefetched()).isZero();
        });
    }

    @Test
    void breakerPropertyDefaultsAreTheEngineDefaults() {
        WorkrowProperties.Breaker breaker = new WorkrowProperties.Breaker();
        assertThat(new BreakerOptions(breaker.getFailureThreshold(), breaker.getCooldown(), breaker.getHalfOpenProbes()))
                .isEqualTo(BreakerOptions.defaults());
        assertThat(QueueOptions.defaults().maxLeaseExpiries()).isZero();
        assertThat(new WorkrowProperties().getDefaults().getMaxLeaseExpiries()).isNull();
    }

    @Test
    void orderedQueuesBlockOnFailureUnlessToldToSkip() {
        withDatabase().withPropertyValues("workrow.queues.payments.ordered=true",
                "workrow.queues.ledger.ordered=true", "workrow.queues.ledger.key-failure=skip",
                "workrow.queues.mail.key-failure=skip", "workrow.heartbeat-interval=2s").run(context -> {
                    WorkrowSettings settings = context.getBean(WorkrowSettings.class);
                    assertThat(settings.queueOptions("payments").ordering()).isEqualTo(KeyOrdering.BLOCK);
                    assertThat(settings.queueOptions("ledger").ordering()).isEqualTo(KeyOrdering.SKIP);
                    assertThat(settings.queueOptions("mail").ordering()).as("key-failure alone orders nothing")
                            .isEqualTo(KeyOrdering.NONE);
                    assertThat(settings.queueOptions("other").ordering()).isEqualTo(KeyOrdering.NONE);
                    assertThat(settings.properties().getHeartbeatInterval()).hasSeconds(2);
                });
        assertThat(new WorkrowProperties().getHeartbeatInterval()).isEqualTo(WorkerRuntime.Builder.DEFAULT_HEARTBEAT_INTERVAL);
    }

    @Test
    void fairQueuesTakeTheirModeAndRateFromProperties() {
        withDatabase().withPropertyValues("workrow.queues.reports.fairness.mode=weighted",
                "workrow.queues.webhooks.fairness.mode=spaced", "workrow.queues.webhooks.fairness.rate-per-minute=120",
                "workrow.queues.sms.fairness.mode=burst").run(context -> {
                    WorkrowSettings settings = context.getBean(WorkrowSettings.class);
                    assertThat(settings.queueOptions("reports").fairness().mode()).isEqualTo(FairnessMode.WEIGHTED);
                    assertThat(settings.queueOptions("webhooks").fairness())
                            .isEqualTo(new FairnessOptions(FairnessMode.SPACED, 120));
                    assertThat(settings.queueOptions("sms").fairness())
                            .isEqualTo(new FairnessOptions(FairnessMode.BURST, FairnessOptions.DEFAULT_RATE_PER_MINUTE));
                    assertThat(settings.queueOptions("other").fairness()).isEqualTo(FairnessOptions.NONE);
                });
    }
}

package io.workrow.queue.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.workrow.queue.BreakerStatus;
import io.workrow.queue.FairnessSetting;
import io.workrow.queue.JobQueue;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueHandler;
import io.workrow.queue.metrics.EnqueueHeaders;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.spring.actuate.WorkrowEndpoint;
import io.workrow.queue.spring.actuate.WorkrowHealthIndicator;
import io.workrow.queue.spring.actuate.WorkrowLagHealthIndicator;
import io.workrow.queue.store.WriteOnceStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/** Meters, health and the endpoint as the starter wires them, against PostgreSQL. */
class WorkrowObservabilityTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(WorkrowAutoConfiguration.class,
                    WorkrowWorkerAutoConfiguration.class, WorkrowMaintenanceAutoConfiguration.class,
                    WorkrowMetricsAutoConfiguration.class, WorkrowObservationAutoConfiguration.class,
                    WorkrowActuatorAutoConfiguration.class))
            .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
            .withPropertyValues("workrow.poll-interval=100ms", "management.endpoints.web.exposure.include=workrow");

    record Ping(int n) {
    }

    static class Pings {
        @QueueHandler("ping")
        void ping(Ping ping) {
        }
    }

    @BeforeEach
    void clean() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_queue_pause");
        database.jdbc().update("DELETE FROM workrow_breaker");
    }

    /** A DataSource on a port where nothing listens. */
    private static DataSource unreachable() {
        return new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1", "postgres", "");
    }

    @Test
    void metersAreBoundWhenAMeterRegistryExists() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withBean(Pings.class)
                .withPropertyValues("workrow.metrics.refresh-interval=100ms")
                .run(context -> {
                    assertThat(context).hasSingleBean(QueueMetrics.class);
                    context.getBean(JobQueue.class).enqueue("ping", new Ping(1));
                    context.getBean(JobQueue.class).enqueue("unhandled", new Ping(2));
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(10)).until(() -> registry.find("workrow.jobs.processed")
                            .tag("queue", "ping").counter() != null
                            && registry.find("workrow.jobs.processed").tag("queue", "ping").counter().count() == 1);
                    assertThat(registry.get("workrow.jobs.claimed").tag("queue", "ping").counter().count()).isEqualTo(1);
                    assertThat(registry.get("workrow.jobs.duration").tags("queue", "ping", "outcome", "success")
                            .timer().count()).isEqualTo(1);
                    await().atMost(Duration.ofSeconds(10)).until(() -> registry.find("workrow.queue.depth")
                            .tags("queue", "unhandled", "status", "pending").gauge() != null);
                    assertThat(registry.get("workrow.queue.depth").tags("queue", "unhandled", "status", "pending")
                            .gauge().value()).isEqualTo(1);
                    assertThat(registry.get("workrow.queue.lag").tag("queue", "unhandled").gauge().value())
                            .isGreaterThanOrEqualTo(0.0);
                });
    }

    @Test
    void nothingIsBoundWithoutMicrometerBeans() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(QueueMetrics.class).doesNotHaveBean(JobObserver.class)
                    .doesNotHaveBean(EnqueueHeaders.class);
        });
    }

    @Test
    void observationRegistryTurnsOnTraceHeadersAndTheJobObserver() {
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create).run(context -> {
            assertThat(context).hasSingleBean(EnqueueHeaders.class).hasSingleBean(JobObserver.class);
        });
    }

    @Test
    void nodeHealthIgnoresQueueLagWhichTheOptInLagIndicatorReportsDown() {
        runner.withPropertyValues("workrow.health.max-lag=1h", "workrow.queues.reports.max-lag=30s",
                "workrow.health.lag-enabled=true").run(context -> {
            WorkrowHealthIndicator node = context.getBean(WorkrowHealthIndicator.class);
            WorkrowLagHealthIndicator lag = context.getBean(WorkrowLagHealthIndicator.class);

            // No handler here: the jobs wait. One queue is 60 s behind; its limit is 30 s.
            JobQueue jobQueue = context.getBean(JobQueue.class);
            jobQueue.enqueue("reports", new Ping(1));
            jobQueue.enqueue("emails", new Ping(2));
            database.rows().makeQueueDue("reports", Duration.ofSeconds(60));
            database.rows().makeQueueDue("emails", Duration.ofSeconds(60));

            assertThat(node.health(true).getStatus()).as("a backlog never takes the node out").isEqualTo(Status.UP);
            Health lagging = lag.health(true);
            assertThat(lagging.getStatus()).isEqualTo(Status.DOWN);
            assertThat(lagging.getDetails()).containsEntry("laggingQueues", List.of("reports"));
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> queues = (Map<String, Map<String, Object>>) lagging.getDetails().get("queues");
            assertThat(queues.get("reports")).containsEntry("pending", 1L).containsEntry("maxLagSeconds", 30L);
            assertThat((Double) queues.get("reports").get("lagSeconds")).isGreaterThanOrEqualTo(59.0);
            database.deleteAllJobs();
        });
    }

    @Test
    void theLagIndicatorIsOffUnlessAskedFor() {
        runner.run(context -> assertThat(context).doesNotHaveBean(WorkrowLagHealthIndicator.class)
                .hasSingleBean(WorkrowHealthIndicator.class));
    }

    @Test
    void healthIsDownWhenTheDatabaseIsUnreachable() {
        WorkrowHealthIndicator health = new WorkrowHealthIndicator(new WriteOnceStore(unreachable(), database.schema()),
                () -> null, Duration.ofMinutes(1));
        Health result = health.health(true);
        assertThat(result.getStatus()).isEqualTo(Status.DOWN);
        assertThat(result.getDetails()).containsKey("error");
    }

    @Test
    void aLostWakeUpConnectionIsADetailNotADownNode() {
        WorkerRuntime cutOff = WorkerRuntime.builder(unreachable())
                .schema("public")
                .pollInterval(Duration.ofSeconds(30))
                .handler("ping", Ping.class, (ping, job) -> { }, QueueOptions.defaults())
                .build();
        cutOff.start();
        try {
            WorkrowHealthIndicator health = new WorkrowHealthIndicator(database.store(), () -> cutOff,
                    Duration.ofMillis(200));
            await().atMost(Duration.ofSeconds(10)).until(() -> health.health(true).getDetails().get("wakeUps")
                    .toString().startsWith("degraded"));
            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
        } finally {
            cutOff.stop();
        }
    }

    @Test
    void endpointWritesActOnlyOnTheQueueInThePathAndItsLimitIsBounded() {
        runner.withPropertyValues("workrow.enabled=false").run(context -> {
            JobQueue jobQueue = context.getBean(JobQueue.class);
            long webhook = jobQueue.enqueue("webhooks", new Ping(1));
            long email = jobQueue.enqueue("emails", new Ping(2));
            database.rows().killWaiting(email, "x");
            WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);

            assertThat(endpoint.operate("emails", "cancel", null, null, null, webhook, null, null, null, null, null, null, null)).containsEntry("cancelled", false);
            assertThat(endpoint.operate("webhooks", "retry", new Long[] {email}, null, null, null, null, null, null, null, null, null, null))
                    .containsEntry("retried", 0);
            assertThat(database.jdbc().queryForList("SELECT status FROM workrow_job ORDER BY id", String.class))
                    .containsExactly("pending", "dead");

            assertThatThrownBy(() -> endpoint.jobs("emails", "dead", null, -1))
                    .isInstanceOf(org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException.class)
                    .hasMessageContaining("limit must be between 1 and 1000, was -1");
            assertThatThrownBy(() -> endpoint.jobs("emails", "dead", null, 1_000_000))
                    .isInstanceOf(org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException.class);
            assertThatThrownBy(() -> endpoint.operate("Bad Queue!", "pause", null, null, null, null, null, null, null, null, null, null, null))
                    .isInstanceOf(org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException.class);
            database.deleteAllJobs();
        });
    }

    @Test
    void endpointListsTheJobsWaitingForOthersAndCancelsOne() {
        runner.withPropertyValues("workrow.enabled=false").run(context -> {
            JobQueue jobQueue = context.getBean(JobQueue.class);
            long first = jobQueue.enqueue("webhooks", new Ping(1));
            long waiting = jobQueue.enqueue(io.workrow.queue.JobRequest.of("webhooks", new Ping(2)).after(first));
            WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);

            assertThat(endpoint.jobs("webhooks", "waiting", null, null)).extracting(JobSummary::id)
                    .containsExactly(waiting);
            assertThat(endpoint.queues().queues()).filteredOn(stats -> stats.queue().equals("webhooks"))
                    .singleElement().satisfies(stats -> assertThat(stats.waiting()).isOne());
            assertThat(endpoint.operate("webhooks", "cancel", null, null, null, waiting, null, null, null, null, null, null, null))
                    .containsEntry("cancelled", true);
            assertThat(endpoint.jobs("webhooks", "waiting", null, null)).isEmpty();
        });
    }

    @Test
    void endpointRetriesExactlyTheDeadJobsMatchingTheErrorText() {
        runner.withPropertyValues("workrow.enabled=false").run(context -> {
            JobQueue jobQueue = context.getBean(JobQueue.class);
            long gone = jobQueue.enqueue("webhooks", new Ping(1));
            long flaky = jobQueue.enqueue("webhooks", new Ping(2));
            long other = jobQueue.enqueue("emails", new Ping(3));
            database.rows().killWaiting(gone, "HTTP 410 Gone");
            database.rows().killWaiting(flaky, "HTTP 503 Service Unavailable");
            database.rows().killWaiting(other, "HTTP 503 Service Unavailable");
            WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);

            assertThat(endpoint.jobs("webhooks", "dead", "503", null)).extracting(JobSummary::id).containsExactly(flaky);
            assertThat(endpoint.operate("webhooks", "retry", null, "503", null, null, null, null, null, null, null, null, null)).containsEntry("retried", 1);

            assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job WHERE status = 'pending'", Long.class))
                    .containsExactly(flaky);
            assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job WHERE status = 'dead' ORDER BY id",
                    Long.class)).containsExactly(gone, other);

            assertThat(endpoint.operate("webhooks", "retry", new Long[] {gone}, null, null, null, null, null, null, null, null, null, null))
                    .containsEntry("retried", 1);
            assertThat(endpoint.operate("emails", "cancel", null, null, null, other, null, null, null, null, null, null, null)).containsEntry("cancelled", false);
            assertThat(endpoint.operate("webhooks", "cancel", null, null, null, gone, null, null, null, null, null, null, null)).containsEntry("cancelled", true);

            assertThat(endpoint.operate("emails", "retry", null, null, "HTTP 503", null, null, null, null, null, null, null, null))
                    .as("a group is its whole kind, not a prefix of it").containsEntry("retried", 0);
            assertThat(endpoint.operate("emails", "retry", null, null, "HTTP 503 Service Unavailable", null, null, null,
                    null, null, null, null, null)).containsEntry("retried", 1);
            assertThatThrownBy(() -> endpoint.operate("emails", "retry", null, null, null, null, null, null, null, null, null, null, null))
                    .hasMessageContaining("retry needs ids, error or group");

            database.rows().killWaiting(other, null);
            assertThat(endpoint.operate("emails", "cancel-dead", null, null, "HTTP 503 Service Unavailable", null, null,
                    null, null, null, null, null, null)).containsEntry("cancelled", 1);
            assertThat(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, other))
                    .isEqualTo("cancelled");
            assertThatThrownBy(() -> endpoint.operate("emails", "cancel-dead", null, null, null, null, null, null, null,
                    null, null, null, null)).hasMessageContaining("cancel-dead needs ids or group");
        });
    }

    @Test
    void endpointPauseStopsClaimsOnEveryRuntimeSharingTheDatabaseAndResumeRestartsThem() {
        java.util.Set<Long> handledElsewhere = java.util.concurrent.ConcurrentHashMap.newKeySet();
        WorkerRuntime otherNode = WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(100))
                .handler("ping", Ping.class, (ping, job) -> handledElsewhere.add(job.id()), QueueOptions.defaults())
                .build();
        otherNode.start();
        try {
            runner.withBean(Pings.class).run(context -> {
                WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);
                JobQueue jobQueue = context.getBean(JobQueue.class);
                endpoint.operate("ping", "pause", null, null, null, null, "incident 7", null, null, null, null, null, null);
                assertThat(endpoint.queues().paused()).containsExactly("ping");
                assertThat(database.jdbc().queryForObject("SELECT reason FROM workrow_queue_pause WHERE queue = 'ping'",
                        String.class)).isEqualTo("incident 7");

                List<Long> ids = jobQueue.enqueueAll(java.util.stream.IntStream.range(0, 10)
                        .mapToObj(i -> io.workrow.queue.JobRequest.of("ping", new Ping(i))).toList());
                // Both nodes are woken by the insert and poll every 100 ms: none may claim.
                await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> database.jdbc()
                        .queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'pending'", Integer.class) == 10);

                assertThat(endpoint.operate("ping", "resume", null, null, null, null, null, null, null, null, null, null, null)).containsEntry("resumed", true);
                await().atMost(Duration.ofSeconds(10)).until(() -> database.jdbc().queryForObject(
                        "SELECT count(*) FROM workrow_job WHERE status = 'completed' AND id = ANY(?)", Integer.class,
                        (Object) ids.toArray(Long[]::new)) == 10);
                assertThat(endpoint.queues().paused()).isEmpty();
            });
        } finally {
            otherNode.stop();
        }
    }

    static class FailingPings {
        @QueueHandler("flaky")
        void ping(Ping ping) {
            throw new IllegalStateException("downstream 503");
        }
    }

    @Test
    void anOpenBreakerIsCountedShownInHealthAndTheEndpointAndClosedByHand() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withBean(FailingPings.class)
                .withPropertyValues("workrow.queues.flaky.breaker.failure-threshold=2",
                        "workrow.queues.flaky.breaker.cooldown=1h", "workrow.queues.flaky.concurrency=1",
                        "workrow.queues.flaky.backoff.initial=10ms", "workrow.queues.flaky.backoff.max=10ms")
                .run(context -> {
                    JobQueue jobQueue = context.getBean(JobQueue.class);
                    for (int i = 0; i < 5; i++) {
                        jobQueue.enqueue(io.workrow.queue.JobRequest.of("flaky", new Ping(i)).maxAttempts(100));
                    }
                    WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);
                    await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.queues().breakers().stream()
                            .anyMatch(b -> b.queue().equals("flaky") && b.state() == BreakerStatus.State.OPEN));
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("workrow.breaker.transitions").tags("queue", "flaky", "state", "open")
                            .counter().count()).isEqualTo(1);

                    Health health = context.getBean(WorkrowHealthIndicator.class).health(true);
                    assertThat(health.getStatus()).as("an open breaker is every node's, not this node's, trouble")
                            .isEqualTo(Status.UP);
                    @SuppressWarnings("unchecked")
                    Map<String, String> breakers = (Map<String, String>) health.getDetails().get("breakers");
                    assertThat(breakers.get("flaky")).startsWith("open until ").endsWith(": 2 consecutive failures");

                    assertThat(endpoint.operate("flaky", "close-breaker", null, null, null, null, null, null, null, null, null, null, null))
                            .containsEntry("closed", true);
                    assertThat(registry.get("workrow.breaker.transitions").tags("queue", "flaky", "state", "closed")
                            .counter().count()).isEqualTo(1);
                    // Still failing: two more failures open it again.
                    await().atMost(Duration.ofSeconds(10)).until(() -> registry.get("workrow.breaker.transitions")
                            .tags("queue", "flaky", "state", "open").counter().count() == 2);

                    endpoint.operate("ping", "open-breaker", null, null, null, null, "vendor outage", null, null, null, null, null, null);
                    assertThat(endpoint.queues().breakers()).anySatisfy(b -> {
                        assertThat(b.queue()).isEqualTo("ping");
                        assertThat(b.state()).isEqualTo(BreakerStatus.State.OPEN);
                        assertThat(b.openUntil()).isNull();
                        assertThat(b.reason()).isEqualTo("opened by hand: vendor outage");
                    });
                    assertThat(((Map<?, ?>) context.getBean(WorkrowHealthIndicator.class).health(true).getDetails()
                            .get("breakers")).get("ping")).isEqualTo("open until closed by hand: opened by hand: vendor outage");
                });
    }

    static class RateLimitedPartner {
        @QueueHandler("partner")
        void call(Ping ping) {
            throw new io.workrow.queue.SnoozeJobException(Duration.ofMinutes(30)).wholeQueue();
        }
    }

    @Test
    void aHandlersWholeQueueSnoozeShowsAsAHoldThatTheEndpointReleases() {
        runner.withBean(RateLimitedPartner.class).run(context -> {
            context.getBean(JobQueue.class).enqueue("partner", new Ping(1));
            WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> !endpoint.queues().holds().isEmpty());
            assertThat(endpoint.queues().holds()).singleElement().satisfies(hold -> {
                assertThat(hold.queue()).isEqualTo("partner");
                assertThat(hold.wholeQueue()).isTrue();
                assertThat(hold.until()).isAfter(java.time.Instant.now().plus(Duration.ofMinutes(29)));
                assertThat(hold.heldBy()).as("the worker whose handler set it").isNotNull();
            });
            assertThat(endpoint.queues().breakers()).as("a hold opens no breaker").isEmpty();

            assertThat(endpoint.operate("partner", "release-hold", null, null, null, null, null, null, null, null, null, null, null))
                    .containsEntry("released", true);
            assertThat(endpoint.queues().holds()).isEmpty();
            endpoint.operate("partner", "hold", null, null, null, null, "window", "tenant-7", null, null,
                    Duration.ofMinutes(5), null, null);
            assertThat(endpoint.queues().holds()).singleElement()
                    .satisfies(hold -> assertThat(hold.partitionKey()).isEqualTo("tenant-7"));
            assertThatThrownBy(() -> endpoint.operate("partner", "hold", null, null, null, null, null, null, null, null,
                    null, null, null)).isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("positive duration");
        });
    }

    @Test
    void concurrencyCapsAreSetListedAndClearedThroughTheEndpoint() {
        runner.run(context -> {
            WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);
            assertThat(endpoint.operate("partner", "set-concurrency", null, null, null, null, "partner's limit", null,
                    null, null, null, 5, null)).containsEntry("globalConcurrency", 5);
            assertThat(endpoint.operate("partner", "set-key-concurrency", null, null, null, null, "per tenant", null,
                    null, null, null, null, 2)).containsEntry("keyConcurrency", 2);
            assertThat(endpoint.queues().caps()).singleElement().satisfies(cap -> {
                assertThat(cap.cap()).isEqualTo(5);
                assertThat(cap.keyCap()).isEqualTo(2);
                assertThat(cap.reason()).isEqualTo("set by hand: partner's limit");
                assertThat(cap.keyReason()).isEqualTo("set by hand: per tenant");
            });
            assertThatThrownBy(() -> endpoint.operate("partner", "set-key-concurrency", null, null, null, null, null,
                    null, null, null, null, null, 0)).isInstanceOf(InvalidEndpointRequestException.class)
                    .hasMessageContaining("keyConcurrency of at least 1");
            assertThat(endpoint.operate("partner", "clear-concurrency", null, null, null, null, null, null, null, null,
                    null, null, null)).containsEntry("cleared", true);
            assertThat(endpoint.queues().caps()).singleElement().satisfies(cap -> {
                assertThat(cap.cap()).as("the cluster-wide cap cleared").isNull();
                assertThat(cap.keyCap()).isEqualTo(2);
                assertThat(cap.reason()).isNull();
                assertThat(cap.keyReason()).as("the per-key cap's reason stays").isEqualTo("set by hand: per tenant");
            });
            assertThat(endpoint.operate("partner", "clear-key-concurrency", null, null, null, null, null, null, null,
                    null, null, null, null)).containsEntry("cleared", true);
            assertThat(endpoint.queues().caps()).isEmpty();
        });
    }

    @Test
    void fairnessKeysAreSetListedAndClearedThroughTheEndpoint() {
        runner.run(context -> {
            WorkrowEndpoint endpoint = context.getBean(WorkrowEndpoint.class);
            assertThat(endpoint.operate("reports", "set-fairness", null, null, null, null, null, "tenant-a", 3.0, null, null, null, null))
                    .containsKey("setting");
            endpoint.operate("reports", "set-fairness", null, null, null, null, null, "", null, 30, null, null, null);
            assertThat(endpoint.queues().fairness()).extracting(FairnessSetting::fairnessKey, FairnessSetting::weight,
                    FairnessSetting::ratePerMinute).containsExactly(tuple("", null, 30), tuple("tenant-a", 3.0, null));
            assertThatThrownBy(() -> endpoint.operate("reports", "set-fairness", null, null, null, null, null, "tenant-a",
                    0.0, null, null, null, null)).isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("weight");
            assertThatThrownBy(() -> endpoint.operate("reports", "clear-fairness", null, null, null, null, null, null, null,
                    null, null, null, null)).isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("needs key");
            assertThat(endpoint.operate("reports", "clear-fairness", null, null, null, null, null, "tenant-a", null, null, null, null, null))
                    .containsEntry("cleared", true);
            assertThat(endpoint.queues().fairness()).extracting(FairnessSetting::fairnessKey).containsExactly("");
        });
    }
}

package io.workrow.queue.metrics;

import io.workrow.queue.maintenance.QueueDepthGauges;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.ExhaustedJobRetirer;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.RetryBackoff;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class QueueMetricsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JobStore store;
    private JdbcJobQueue jobQueue;
    private MeterRegistry registry;
    private MicrometerQueueMetrics metrics;

    record Task(String kind) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        store = database.store();
        jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        registry = new SimpleMeterRegistry();
        metrics = new MicrometerQueueMetrics(registry);
    }

    private double counter(String name) {
        return registry.get(name).tag("queue", "work").counter().count();
    }

    private long timerCount(String outcome) {
        return registry.get("workrow.jobs.duration").tag("queue", "work").tag("outcome", outcome).timer().count();
    }

    @Test
    void eachCounterEqualsTheNumberOfItsEvents() {
        // A job a crashed worker held: its lease expires and the sweeper recovers it (stale 1).
        long ghostJob = jobQueue.enqueue(JobRequest.of("work", new Task("ok")).maxAttempts(3));
        store.claims().claim("work", "crashed-worker", 1, Duration.ofMinutes(1), false);
        database.rows().expireLease(ghostJob);
        assertThat(new StaleLeaseSweeper(store, 100, metrics, java.util.Map.of(), io.workrow.queue.worker.RetryBackoff.DEFAULT).runOnce()).isEqualTo(1);

        // A pending job whose attempts an operator spent: the retirer moves it to dead (retired 1).
        long exhausted = jobQueue.enqueue(JobRequest.of("work", new Task("ok")).maxAttempts(2));
        database.rows().setAttempts(exhausted, 2);
        assertThat(new ExhaustedJobRetirer(store, 100, metrics).runOnce()).isEqualTo(1);

        // Three successes, one job failing twice to dead, one discard.
        for (int i = 0; i < 3; i++) {
            jobQueue.enqueue("work", new Task("ok"));
        }
        jobQueue.enqueue(JobRequest.of("work", new Task("fail")).maxAttempts(2));
        jobQueue.enqueue("work", new Task("discard"));

        try (WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(50))
                .metrics(metrics)
                .handler("work", Task.class, (task, job) -> {
                    switch (task.kind()) {
                        case "fail" -> throw new IllegalStateException("always");
                        case "discard" -> throw new DiscardJobException("never mind");
                        default -> { }
                    }
                }, QueueOptions.defaults().withBackoff(new RetryBackoff(Duration.ofMillis(50), 1.0,
                        Duration.ofMillis(50), 0.0)))
                .build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(15)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status IN ('scheduled', 'pending', 'running')", Integer.class) == 0
                    && runtime.inFlightCount() == 0);
        }

        // ok x3 + the recovered job + 2 attempts of "fail" + 1 "discard"
        assertThat(counter("workrow.jobs.claimed")).isEqualTo(7);
        assertThat(counter("workrow.jobs.processed")).isEqualTo(4);
        assertThat(counter("workrow.jobs.failed")).isEqualTo(3);
        assertThat(counter("workrow.jobs.stale")).isEqualTo(1);
        assertThat(counter("workrow.jobs.retired")).isEqualTo(3);
        assertThat(timerCount("success")).isEqualTo(4);
        assertThat(timerCount("failure")).isEqualTo(2);
        assertThat(timerCount("discarded")).isEqualTo(1);
        // The counts add up: every claim ended in exactly one recorded outcome.
        assertThat(counter("workrow.jobs.claimed"))
                .isEqualTo(counter("workrow.jobs.processed") + counter("workrow.jobs.failed"));
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'dead'",
                Integer.class)).isEqualTo((int) counter("workrow.jobs.retired"));
    }

    @Test
    void depthAndLagGaugesMatchTheTable() {
        jobQueue.enqueue("work", new Task("a"));
        jobQueue.enqueue("work", new Task("b"));
        jobQueue.enqueue("work", new Task("c"));
        jobQueue.enqueue("other", new Task("d"));
        database.rows().makeQueueDue("work", Duration.ofSeconds(120));
        store.claims().claim("work", "w", 1, Duration.ofMinutes(1), false);
        long dead = jobQueue.enqueue(JobRequest.of("work", new Task("e")).delay(Duration.ofHours(1)));
        database.rows().killWaiting(dead);
        jobQueue.enqueue(JobRequest.of("work", new Task("f")).after(dead));

        QueueDepthGauges gauges = new QueueDepthGauges(store, registry);
        assertThat(gauges.runOnce()).isEqualTo(2);

        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "pending").gauge().value())
                .isEqualTo(2);
        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "running").gauge().value())
                .isEqualTo(1);
        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "dead").gauge().value())
                .isEqualTo(1);
        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "waiting").gauge().value())
                .as("f waits for the dead job: cancelled at enqueue, not waiting").isZero();
        long running = database.jdbc().queryForObject("SELECT id FROM workrow_job WHERE status = 'running'", Long.class);
        jobQueue.enqueue(JobRequest.of("work", new Task("g")).after(running));
        gauges.runOnce();
        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "waiting").gauge().value())
                .isEqualTo(1);
        assertThat(registry.get("workrow.queue.lag").tags("queue", "work").gauge().value()).isBetween(119.0, 180.0);
        assertThat(registry.get("workrow.queue.lag").tags("queue", "other").gauge().value()).isLessThan(60.0);

        database.deleteAllJobs();
        assertThat(gauges.runOnce()).as("a queue seen once keeps reporting").isEqualTo(2);
        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "pending").gauge().value())
                .isZero();
        assertThat(registry.get("workrow.queue.lag").tags("queue", "work").gauge().value()).isZero();
        assertThat(registry.get("workrow.queue.depth").tags("queue", "work", "status", "dead").gauge().value())
                .isZero();
    }

    @Test
    void theBreakerStateGaugeShowsTheClustersStateOfEachBreaker() {
        database.jdbc().update("DELETE FROM workrow_breaker");
        QueueDepthGauges gauges = new QueueDepthGauges(store, registry);
        gauges.runOnce();
        assertThat(registry.find("workrow.breaker.state").gauges()).isEmpty();

        store.breakers().register("partner");
        store.breakers().register("mail");
        store.breakers().openByHand("partner", "the partner's API is down");
        gauges.runOnce();
        assertThat(breakerState("partner", "open")).isEqualTo(1);
        assertThat(breakerState("partner", "closed")).isZero();
        assertThat(breakerState("partner", "half_open")).isZero();
        assertThat(breakerState("mail", "closed")).isEqualTo(1);
        assertThat(breakerState("mail", "open")).isZero();

        store.breakers().closeByHand("partner", "back");
        gauges.runOnce();
        assertThat(breakerState("partner", "open")).isZero();
        assertThat(breakerState("partner", "closed")).isEqualTo(1);
        database.jdbc().update("DELETE FROM workrow_breaker");
    }

    private double breakerState(String queue, String state) {
        return registry.get("workrow.breaker.state").tags("queue", queue, "state", state).gauge().value();
    }
}

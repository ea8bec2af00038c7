package io.workrow.queue.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import brave.Tracing;
import brave.handler.MutableSpan;
import brave.handler.SpanHandler;
import brave.propagation.ThreadLocalCurrentTraceContext;
import brave.propagation.TraceContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.brave.bridge.BraveBaggageManager;
import io.micrometer.tracing.brave.bridge.BraveCurrentTraceContext;
import io.micrometer.tracing.brave.bridge.BravePropagator;
import io.micrometer.tracing.brave.bridge.BraveTracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One trace from the code that enqueued to the handler that ran, with a real tracer (Brave). */
class ObservationJobObserverTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final List<MutableSpan> spans = new CopyOnWriteArrayList<>();
    private Tracing tracing;
    private Tracer tracer;
    private ObservationRegistry registry;

    record Ping(String text) {
    }

    @BeforeEach
    void setUp() {
        tracing = Tracing.newBuilder()
                .currentTraceContext(ThreadLocalCurrentTraceContext.create())
                .addSpanHandler(new SpanHandler() {
                    @Override
                    public boolean end(TraceContext context, MutableSpan span, Cause cause) {
                        spans.add(span);
                        return true;
                    }
                })
                .build();
        tracer = new BraveTracer(tracing.tracer(), new BraveCurrentTraceContext(tracing.currentTraceContext()),
                new BraveBaggageManager());
        BravePropagator propagator = new BravePropagator(tracing);
        registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
    }

    @AfterEach
    void tearDown() {
        tracing.close();
    }

    @Test
    void handlerRunsInTheTraceThatEnqueuedTheJob() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper())
                .withHeaders(new ObservationTraceHeaders(registry));
        List<String> traceSeenByHandler = new CopyOnWriteArrayList<>();

        Observation request = Observation.start("http.server.requests", registry);
        String requestTrace;
        long id;
        try (Observation.Scope scope = request.openScope()) {
            requestTrace = tracer.currentSpan().context().traceId();
            id = jobQueue.enqueue("ping", new Ping("hello"));
        } finally {
            request.stop();
        }
        assertThat(database.jdbc().queryForObject("SELECT headers::text FROM workrow_job WHERE id = ?", String.class, id))
                .contains(requestTrace);

        try (WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .observer(new ObservationJobObserver(registry))
                .handler("ping", Ping.class, (ping, job) -> traceSeenByHandler.add(tracer.currentSpan().context().traceId()),
                        QueueOptions.defaults())
                .build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> spans.stream().anyMatch(s -> "ping process".equals(s.name())));
        }

        assertThat(traceSeenByHandler).containsExactly(requestTrace);
        MutableSpan jobSpan = spans.stream().filter(s -> "ping process".equals(s.name())).findFirst().orElseThrow();
        assertThat(jobSpan.traceId()).isEqualTo(requestTrace);
        assertThat(jobSpan.tags()).containsEntry("queue", "ping").containsEntry("outcome", "success")
                .containsEntry("job.id", Long.toString(id)).containsEntry("attempt", "1");
        MutableSpan enqueueSpan = spans.stream().filter(s -> "workrow enqueue".equals(s.name())).findFirst().orElseThrow();
        assertThat(jobSpan.parentId()).isEqualTo(enqueueSpan.id());
    }

    @Test
    void jobsEnqueuedOutsideATraceStartTheirOwn() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        long id = jobQueue.enqueue("ping", new Ping("no trace"));
        assertThat(database.jdbc().queryForObject("SELECT headers::text FROM workrow_job WHERE id = ?", String.class, id))
                .isEqualTo("{}");
        try (WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .observer(new ObservationJobObserver(registry))
                .handler("ping", Ping.class, (ping, job) -> { }, QueueOptions.defaults())
                .build()) {
            runtime.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> spans.stream().anyMatch(s -> "ping process".equals(s.name())));
        }
        MutableSpan jobSpan = spans.stream().filter(s -> "ping process".equals(s.name())).findFirst().orElseThrow();
        assertThat(jobSpan.parentId()).isNull();
    }

    @Test
    void aRunInterruptedByShutdownIsTaggedReleased() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        jobQueue.enqueue("nap", new Ping("long"));
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .observer(new ObservationJobObserver(registry))
                .shutdownTimeout(Duration.ofMillis(200))
                .handler("nap", Ping.class, (ping, job) -> {
                    running.countDown();
                    Thread.sleep(60_000);
                }, QueueOptions.defaults())
                .build();
        runtime.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> running.getCount() == 0);
        runtime.stop();
        MutableSpan jobSpan = spans.stream().filter(s -> "nap process".equals(s.name())).findFirst().orElseThrow();
        assertThat(jobSpan.tags()).containsEntry("outcome", "released");
    }
}

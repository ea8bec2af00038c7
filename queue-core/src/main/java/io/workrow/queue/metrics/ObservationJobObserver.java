package io.workrow.queue.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.workrow.queue.store.ClaimedPosition;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Makes each handler run a Micrometer {@link Observation} named {@code workrow.job}, with
 * low-cardinality key values {@code queue} and {@code outcome} and high-cardinality {@code job.id}
 * and {@code attempt}. The trace context that {@link ObservationTraceHeaders} stored in the job's
 * {@code headers} at enqueue is read back through a {@link ReceiverContext}, so a tracer makes the
 * run a child of the enqueuing span: one trace from the request that enqueued to the handler.
 */
public final class ObservationJobObserver implements JobObserver {

    private static final JsonMapper HEADERS = JsonMapper.builder().build();

    private final ObservationRegistry registry;

    public ObservationJobObserver(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public Run start(ClaimedPosition job) {
        ReceiverContext<Map<String, String>> context = new ReceiverContext<>((carrier, key) -> carrier.get(key));
        context.setCarrier(headers(job.headersJson()));
        context.setRemoteServiceName("workrow");
        Observation observation = Observation.createNotStarted("workrow.job", () -> context, registry)
                .contextualName(job.queue() + " process")
                .lowCardinalityKeyValue("queue", job.queue())
                .highCardinalityKeyValue("job.id", Long.toString(job.id()))
                .highCardinalityKeyValue("attempt", Integer.toString(job.attempt()))
                .start();
        Observation.Scope scope = observation.openScope();
        return new Run() {
            @Override
            public void outcome(JobOutcome outcome) {
                observation.lowCardinalityKeyValue("outcome", outcome.tagValue());
            }

            @Override
            public void error(Throwable error) {
                observation.error(error);
            }

            private boolean left;

            @Override
            public synchronized void leave() {
                if (!left) {
                    left = true;
                    scope.close();
                }
            }

            @Override
            public void close() {
                leave();
                observation.stop();
            }
        };
    }

    private static Map<String, String> headers(String json) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (json == null || json.equals("{}")) {
            return headers;
        }
        try {
            HEADERS.readTree(json).properties().forEach(entry -> headers.put(entry.getKey(), entry.getValue().asString()));
        } catch (JacksonException e) {
            // Unreadable headers lose the trace link, never the job.
        }
        return headers;
    }
}

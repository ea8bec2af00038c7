package io.workrow.queue.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import io.workrow.queue.metrics.EnqueueHeaders;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Captures the trace context current at enqueue into the job's {@code headers}: a short
 * {@code workrow.enqueue} observation with a {@link SenderContext}, into whose carrier a tracer
 * injects its propagation fields ({@code traceparent}, {@code b3}, ...). Without a tracer the
 * carrier stays empty and the job's headers stay {@code {}}.
 */
public final class ObservationTraceHeaders implements EnqueueHeaders {

    private final ObservationRegistry registry;

    public ObservationTraceHeaders(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public Map<String, String> capture(int jobs) {
        Map<String, String> headers = new LinkedHashMap<>();
        SenderContext<Map<String, String>> context = new SenderContext<>((carrier, key, value) -> carrier.put(key, value));
        context.setCarrier(headers);
        context.setRemoteServiceName("workrow");
        Observation.createNotStarted("workrow.enqueue", () -> context, registry)
                .contextualName("workrow enqueue")
                .highCardinalityKeyValue("jobs", Integer.toString(jobs))
                .start()
                .stop();
        return headers;
    }
}

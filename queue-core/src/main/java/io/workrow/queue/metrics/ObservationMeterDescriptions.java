package io.workrow.queue.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import java.util.Map;

/**
 * Gives the timers that Micrometer makes from Workrow's observations ({@code workrow.job}, {@code workrow.enqueue}
 * and their {@code .active} long-task timers) a description, which an observation cannot carry:
 * without it a Prometheus scrape has no help text for them. Add it to the registry's filters (the
 * starter does) before the first job runs.
 */
public final class ObservationMeterDescriptions implements MeterFilter {

    private static final Map<String, String> DESCRIPTIONS = Map.of(
            "workrow.job", "Handler runs (the workrow.job observation), by queue and outcome, with any error",
            "workrow.job.active", "Handler runs in progress (the workrow.job observation), by queue",
            "workrow.enqueue", "Enqueues that put the caller's trace context into the job's headers"
                    + " (the workrow.enqueue observation)",
            "workrow.enqueue.active", "Enqueues in progress (the workrow.enqueue observation)");

    @Override
    public Meter.Id map(Meter.Id id) {
        String description = DESCRIPTIONS.get(id.getName());
        if (description == null || id.getDescription() != null) {
            return id;
        }
        return new Meter.Id(id.getName(), Tags.of(id.getTagsAsIterable()), id.getBaseUnit(), description, id.getType());
    }
}

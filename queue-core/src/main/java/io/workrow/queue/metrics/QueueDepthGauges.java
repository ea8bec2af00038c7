package io.workrow.queue.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.workrow.queue.maintenance.MaintenanceTask;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.QueueDepth;
import java.util.ArrayList;
import java.util.List;

/**
 * The gauges {@code workrow.queue.depth} (tags {@code queue}, {@code status}: pending, running,
 * dead) and {@code workrow.queue.lag} (tag {@code queue}: seconds the oldest due pending job has
 * waited). One cheap query for all queues per refresh ({@link #runOnce()}, scheduled like
 * maintenance), never one per queue per scrape; a scrape reads the last values.
 */
public final class QueueDepthGauges implements MaintenanceTask {

    private final JobStore store;
    private final MultiGauge depth;
    private final MultiGauge lag;

    public QueueDepthGauges(JobStore store, MeterRegistry registry) {
        this.store = store;
        this.depth = MultiGauge.builder("workrow.queue.depth").description("Jobs by queue and status")
                .baseUnit("jobs").register(registry);
        this.lag = MultiGauge.builder("workrow.queue.lag")
                .description("Seconds since the oldest due pending job became due").baseUnit("seconds")
                .register(registry);
    }

    @Override
    public String name() {
        return "queue-depth-gauges";
    }

    @Override
    public int runOnce() {
        List<QueueDepth> depths = store.queueDepth();
        List<MultiGauge.Row<?>> depthRows = new ArrayList<>();
        List<MultiGauge.Row<?>> lagRows = new ArrayList<>();
        for (QueueDepth queue : depths) {
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "pending"), queue.pending()));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "running"), queue.running()));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "dead"), queue.dead()));
            lagRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue()), queue.lag().toMillis() / 1000.0));
        }
        depth.register(depthRows, true);
        lag.register(lagRows, true);
        return depths.size();
    }
}

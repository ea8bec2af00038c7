package io.workrow.queue.maintenance;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.workrow.queue.BreakerStatus;
import io.workrow.queue.maintenance.MaintenanceTask;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.QueueDepth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The gauges {@code workrow.queue.depth} (tags {@code queue}, {@code status}: pending, running,
 * dead) and {@code workrow.queue.lag} (tag {@code queue}: seconds the oldest due pending job has
 * waited), and {@code workrow.breaker.state} (tags {@code queue}, {@code state}: 1 for the state
 * each queue's circuit breaker is in, 0 for the others; the cluster's, as {@code workrow_breaker}
 * holds it). A queue seen once keeps reporting, with zeros when it has no open work. Two cheap
 * queries for all queues per refresh ({@link #runOnce()}, scheduled like maintenance), never one
 * per queue per scrape; a scrape reads the last values.
 */
public final class QueueDepthGauges implements MaintenanceTask {

    private final JobStore store;
    private final MultiGauge depth;
    private final MultiGauge lag;
    private final MultiGauge breakers;
    /** Every queue seen so far: one whose work is all done reports zeros rather than vanishing. */
    private final Set<String> seen = new TreeSet<>();

    public QueueDepthGauges(JobStore store, MeterRegistry registry) {
        this(store, registry, Set.of());
    }

    /** @param knownQueues queues to report from the start, at zero until they have work */
    public QueueDepthGauges(JobStore store, MeterRegistry registry, java.util.Collection<String> knownQueues) {
        this.store = store;
        this.seen.addAll(knownQueues);
        this.depth = MultiGauge.builder("workrow.queue.depth").description("Jobs by queue and status")
                .baseUnit("jobs").register(registry);
        this.lag = MultiGauge.builder("workrow.queue.lag")
                .description("Seconds since the oldest due pending job became due").baseUnit("seconds")
                .register(registry);
        this.breakers = MultiGauge.builder("workrow.breaker.state")
                .description("1 for the state a queue's circuit breaker is in (closed, open, half_open), 0 for the others")
                .register(registry);
    }

    @Override
    public String name() {
        return "queue-depth-gauges";
    }

    @Override
    public synchronized int runOnce() {
        Map<String, QueueDepth> depths = new TreeMap<>();
        for (QueueDepth depth : store.queueDepth()) {
            depths.put(depth.queue(), depth);
        }
        seen.addAll(depths.keySet());
        List<MultiGauge.Row<?>> depthRows = new ArrayList<>();
        List<MultiGauge.Row<?>> lagRows = new ArrayList<>();
        for (String name : seen) {
            QueueDepth queue = depths.getOrDefault(name, QueueDepth.empty(name));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "pending"), queue.pending()));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "scheduled"), queue.scheduled()));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "waiting"), queue.waiting()));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "running"), queue.running()));
            depthRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue(), "status", "dead"), queue.dead()));
            lagRows.add(MultiGauge.Row.of(Tags.of("queue", queue.queue()), queue.lag().toMillis() / 1000.0));
        }
        depth.register(depthRows, true);
        lag.register(lagRows, true);
        List<MultiGauge.Row<?>> breakerRows = new ArrayList<>();
        for (BreakerStatus breaker : store.breakers().list()) {
            for (BreakerStatus.State state : BreakerStatus.State.values()) {
                breakerRows.add(MultiGauge.Row.of(Tags.of("queue", breaker.queue(), "state", state.columnValue()),
                        breaker.state() == state ? 1 : 0));
            }
        }
        breakers.register(breakerRows, true);
        return seen.size();
    }
}

package io.workrow.queue.spring.actuate;

import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.QueueDepth;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code workrow} health indicator.
 * <ul>
 * <li><b>DOWN</b> when the database cannot be queried, or when a queue that is not paused has
 * a lag (age of its oldest due pending job) above its {@code max-lag}.</li>
 * <li><b>OUT_OF_SERVICE</b> when this node's insert listener has been disconnected longer than
 * {@code workrow.health.listener-timeout}: jobs still run, found by polling, but later, and the
 * cause (database connectivity, a proxy that drops LISTEN) needs a look.</li>
 * <li><b>UP</b> otherwise.</li>
 * </ul>
 * Details give each queue's pending, running and dead jobs, its lag and whether it is paused.
 */
public final class WorkrowHealthIndicator extends AbstractHealthIndicator {

    private final JobStore store;
    private final Function<String, Duration> maxLag;
    private final Supplier<WorkerRuntime> runtime;
    private final Duration listenerTimeout;

    /**
     * @param maxLag the lag limit of each queue
     * @param runtime this node's worker runtime, or a supplier of {@code null} on nodes without workers
     */
    public WorkrowHealthIndicator(JobStore store, Function<String, Duration> maxLag, Supplier<WorkerRuntime> runtime,
            Duration listenerTimeout) {
        super("Workrow health check failed");
        this.store = store;
        this.maxLag = maxLag;
        this.runtime = runtime;
        this.listenerTimeout = listenerTimeout;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        List<QueueDepth> depths = store.queueDepth();
        Set<String> paused = new TreeSet<>(store.pausedQueues());
        Map<String, Object> queues = new LinkedHashMap<>();
        List<String> lagging = new ArrayList<>();
        for (QueueDepth depth : depths) {
            Duration limit = maxLag.apply(depth.queue());
            boolean isPaused = paused.contains(depth.queue());
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("pending", depth.pending());
            details.put("running", depth.running());
            details.put("dead", depth.dead());
            details.put("lagSeconds", depth.lag().toMillis() / 1000.0);
            details.put("maxLagSeconds", limit.toSeconds());
            details.put("paused", isPaused);
            queues.put(depth.queue(), details);
            if (!isPaused && depth.lag().compareTo(limit) > 0) {
                lagging.add(depth.queue());
            }
        }
        WorkerRuntime worker = runtime.get();
        Duration listenerDown = worker == null ? Duration.ZERO : worker.listenerDisconnectedFor();
        if (!lagging.isEmpty()) {
            builder.down().withDetail("laggingQueues", lagging);
        } else if (listenerDown.compareTo(listenerTimeout) > 0) {
            builder.outOfService();
        } else {
            builder.up();
        }
        if (worker != null) {
            builder.withDetail("listener", worker.isListenerConnected() ? "connected"
                    : "disconnected for " + listenerDown.toSeconds() + "s");
        }
        builder.withDetail("pausedQueues", paused).withDetail("queues", queues);
    }
}

package io.workrow.queue.spring.actuate;

import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.QueueDepth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The opt-in {@code workrowLag} health indicator ({@code workrow.health.lag-enabled=true}): DOWN
 * when a queue that is not paused has a lag (the age of its oldest due pending job, counted from
 * when it last became due) above its {@code max-lag}. Lag is a fact about the whole cluster, the
 * same on every node: put this indicator in a health group of its own for alerting, never in the
 * group a load balancer reads. Its one query (over the partial indexes) runs at most once per
 * {@code refresh} however often the indicator is read.
 */
public final class WorkrowLagHealthIndicator extends AbstractHealthIndicator {

    private final JobStore store;
    private final Function<String, Duration> maxLag;
    private final long refreshNanos;
    private List<QueueDepth> depths;
    private Set<String> paused;
    private long readAtNanos;

    public WorkrowLagHealthIndicator(JobStore store, Function<String, Duration> maxLag, Duration refresh) {
        super("Workrow lag check failed");
        this.store = store;
        this.maxLag = maxLag;
        this.refreshNanos = refresh.toNanos();
    }

    @Override
    protected synchronized void doHealthCheck(Health.Builder builder) {
        if (depths == null || System.nanoTime() - readAtNanos > refreshNanos) {
            depths = store.queueDepth();
            paused = new TreeSet<>(store.pausedQueues());
            readAtNanos = System.nanoTime();
        }
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
        if (lagging.isEmpty()) {
            builder.up();
        } else {
            builder.down().withDetail("laggingQueues", lagging);
        }
        builder.withDetail("pausedQueues", paused).withDetail("queues", queues);
    }
}

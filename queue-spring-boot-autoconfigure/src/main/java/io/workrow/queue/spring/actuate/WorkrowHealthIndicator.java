package io.workrow.queue.spring.actuate;

import io.workrow.queue.BreakerStatus;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code workrow} health indicator: facts about this node only, so that a backlog or a slow
 * queue never takes every node out of a load balancer at once.
 * <ul>
 * <li><b>DOWN</b> when the database (Workrow's table) cannot be reached, or a poller thread of
 * this node has died.</li>
 * <li><b>UP</b> otherwise. The wake-up connection is a detail: while it is down, jobs still run,
 * found by polling, only later, and {@code wakeUps} says {@code degraded} once it has been down
 * longer than {@code workrow.health.listener-timeout}.</li>
 * </ul>
 * Circuit breakers that are not closed are a detail ({@code breakers}): an open breaker means a
 * dependency is down for every node alike, not that this node is unfit to serve.
 * Queue lag is the separate, opt-in {@link WorkrowLagHealthIndicator}.
 */
public final class WorkrowHealthIndicator extends AbstractHealthIndicator {

    private final JobStore store;
    private final Supplier<WorkerRuntime> runtime;
    private final Duration listenerTimeout;

    /** @param runtime this node's worker runtime, or a supplier of {@code null} on nodes without workers */
    public WorkrowHealthIndicator(JobStore store, Supplier<WorkerRuntime> runtime, Duration listenerTimeout) {
        super("Workrow health check failed");
        this.store = store;
        this.runtime = runtime;
        this.listenerTimeout = listenerTimeout;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        store.tableCheck(); // throws when the database cannot be reached: DOWN with the error
        Map<String, String> breakers = new TreeMap<>();
        for (BreakerStatus breaker : store.breakers().list()) {
            if (breaker.state() != BreakerStatus.State.CLOSED) {
                breakers.put(breaker.queue(), breaker.state().columnValue()
                        + (breaker.state() == BreakerStatus.State.OPEN
                                ? breaker.openUntil() == null ? " until closed by hand" : " until " + breaker.openUntil()
                                : "")
                        + (breaker.reason() == null ? "" : ": " + breaker.reason()));
            }
        }
        if (!breakers.isEmpty()) {
            builder.withDetail("breakers", breakers);
        }
        WorkerRuntime worker = runtime.get();
        if (worker == null) {
            builder.up().withDetail("workers", "none on this node");
            return;
        }
        if (worker.deadPollers().isEmpty()) {
            builder.up();
        } else {
            builder.down().withDetail("deadPollers", worker.deadPollers());
        }
        builder.withDetail("worker", worker.workerId()).withDetail("inFlight", worker.inFlightCount());
        if (!worker.isListening()) {
            builder.withDetail("wakeUps", "polling only");
        } else if (worker.isListenerConnected()) {
            builder.withDetail("wakeUps", "listening");
        } else {
            Duration down = worker.listenerDisconnectedFor();
            builder.withDetail("wakeUps", (down.compareTo(listenerTimeout) > 0 ? "degraded" : "reconnecting")
                    + ": listener disconnected for " + down.toSeconds() + "s; jobs are found by polling");
        }
    }
}

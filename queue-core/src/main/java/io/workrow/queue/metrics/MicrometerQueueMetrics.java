package io.workrow.queue.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.workrow.queue.BreakerStatus;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * {@link QueueMetrics} as Micrometer meters, all tagged {@code queue}: counters
 * {@code workrow.jobs.claimed}, {@code .processed}, {@code .failed}, {@code .stale}, {@code .abandoned},
 * {@code .retired}, {@code .snoozed}, {@code .expired}, and the timer {@code workrow.jobs.duration} (handler time) tagged also
 * {@code outcome}; {@code workrow.breaker.transitions} tagged also {@code state} (the state
 * entered); the gauge {@code workrow.queue.handlers}, this node's handler slots for the queue. Meters
 * are looked up once per queue and kept.
 */
public final class MicrometerQueueMetrics implements QueueMetrics {

    private final MeterRegistry registry;
    private final Map<String, Counter> claimed = new ConcurrentHashMap<>();
    private final Map<String, Counter> processed = new ConcurrentHashMap<>();
    private final Map<String, Counter> failed = new ConcurrentHashMap<>();
    private final Map<String, Counter> stale = new ConcurrentHashMap<>();
    private final Map<String, Counter> retired = new ConcurrentHashMap<>();
    private final Map<String, Counter> abandoned = new ConcurrentHashMap<>();
    private final Map<String, Counter> snoozed = new ConcurrentHashMap<>();
    private final Map<String, Counter> expired = new ConcurrentHashMap<>();
    private final Map<String, Timer> durations = new ConcurrentHashMap<>();
    private final Map<String, Counter> transitions = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> handlerSlots = new ConcurrentHashMap<>();

    public MicrometerQueueMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void register(String queue) {
        counter(claimed, "workrow.jobs.claimed", "Jobs claimed by this worker", queue);
        counter(processed, "workrow.jobs.processed", "Jobs completed successfully", queue);
        failedCounter(queue);
        counter(stale, "workrow.jobs.stale", "Jobs whose expired lease the sweeper recovered", queue);
        counter(retired, "workrow.jobs.retired", "Jobs moved to dead", queue);
        abandonedCounter(queue);
        snoozedCounter(queue);
        expiredCounter(queue);
        for (JobOutcome outcome : JobOutcome.values()) {
            timer(queue, outcome);
        }
    }

    @Override
    public void claimed(String queue, int count) {
        if (count > 0) {
            counter(claimed, "workrow.jobs.claimed", "Jobs claimed by this worker", queue).increment(count);
        }
    }

    @Override
    public void handled(String queue, JobOutcome outcome, Duration handlerTime) {
        timer(queue, outcome).record(handlerTime);
        if (outcome == JobOutcome.SUCCESS) {
            counter(processed, "workrow.jobs.processed", "Jobs completed successfully", queue).increment();
        } else if (outcome == JobOutcome.FAILURE || outcome == JobOutcome.DISCARDED) {
            failedCounter(queue).increment();
        } else if (outcome == JobOutcome.SNOOZED) {
            snoozedCounter(queue).increment();
        } else if (outcome == JobOutcome.EXPIRED) {
            expiredCounter(queue).increment();
        }
    }

    private Counter snoozedCounter(String queue) {
        return counter(snoozed, "workrow.jobs.snoozed", "Runs that snoozed their job (SnoozeJobException), no attempt"
                + " spent", queue);
    }

    private Counter expiredCounter(String queue) {
        return counter(expired, "workrow.jobs.expired", "Jobs cancelled unstarted past their deadline"
                + " (JobRequest.expiresAt), by the worker they reached or by the sweep", queue);
    }

    @Override
    public void expired(String queue) {
        expiredCounter(queue).increment();
    }

    @Override
    public void unreadable(String queue) {
        failedCounter(queue).increment();
    }

    @Override
    public void abandoned(String queue) {
        abandonedCounter(queue).increment();
    }

    private Counter abandonedCounter(String queue) {
        return counter(abandoned, "workrow.jobs.abandoned",
                "Jobs whose handler ignored the interrupt past its timeout or shutdown, and whose lease was let go",
                queue);
    }

    @Override
    public void staleRecovered(String queue) {
        counter(stale, "workrow.jobs.stale", "Jobs whose expired lease the sweeper recovered", queue).increment();
    }

    @Override
    public void retired(String queue) {
        counter(retired, "workrow.jobs.retired", "Jobs moved to dead", queue).increment();
    }

    @Override
    public void handlers(String queue, int slots) {
        handlerSlots.computeIfAbsent(queue, q -> {
            AtomicInteger value = new AtomicInteger();
            Gauge.builder("workrow.queue.handlers", value, AtomicInteger::get)
                    .description("Handler slots this node gives the queue; 0 or absent where no handler of it runs")
                    .tag("queue", q).strongReference(true).register(registry);
            return value;
        }).set(slots);
    }

    @Override
    public void registerBreaker(String queue) {
        for (BreakerStatus.State state : BreakerStatus.State.values()) {
            transitions(queue, state);
        }
    }

    @Override
    public void breakerTransition(String queue, BreakerStatus.State state) {
        transitions(queue, state).increment();
    }

    private Counter transitions(String queue, BreakerStatus.State state) {
        return transitions.computeIfAbsent(queue + '\u0000' + state.columnValue(), key -> Counter.builder("workrow.breaker.transitions")
                .description("Circuit breaker state changes, by the state entered")
                .tag("queue", queue).tag("state", state.columnValue())
                .register(registry));
    }

    private Timer timer(String queue, JobOutcome outcome) {
        return durations.computeIfAbsent(queue + '\u0000' + outcome.tagValue(), key -> Timer.builder("workrow.jobs.duration")
                .description("Time handlers ran, by how the run ended")
                .tag("queue", queue).tag("outcome", outcome.tagValue())
                .register(registry));
    }

    private Counter failedCounter(String queue) {
        return counter(failed, "workrow.jobs.failed", "Attempts that failed (thrown, discarded or unreadable)", queue);
    }

    private Counter counter(Map<String, Counter> cache, String name, String description, String queue) {
        return cache.computeIfAbsent(queue, (Function<String, Counter>) q -> Counter.builder(name)
                .description(description).tag("queue", q).register(registry));
    }
}

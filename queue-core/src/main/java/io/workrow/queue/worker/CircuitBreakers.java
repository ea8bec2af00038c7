package io.workrow.queue.worker;

import io.workrow.queue.BreakerStatus;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.BreakerStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This runtime's side of the circuit breakers of its guarded queues; their state is in the
 * database ({@link BreakerStore}), shared by every node. The claim statement itself refuses a
 * queue whose breaker is not closed; here the poller takes the probes of a breaker whose cooldown
 * is over, and the result writer reports each batch's outcomes. Every transition a statement of
 * this runtime made is logged and counted here, once.
 */
final class CircuitBreakers {

    private static final Logger log = LoggerFactory.getLogger(CircuitBreakers.class);

    private final BreakerStore store;
    private final QueueMetrics metrics;
    private final Map<String, BreakerOptions> guarded;
    /** Guarded queues whose breaker row is known to exist; a row is created before its first use. */
    private final Set<String> registered = ConcurrentHashMap.newKeySet();
    /**
     * Per guarded queue, failed attempts handed to the result writer and not yet reported to the
     * breaker. Handlers that fail fast would otherwise go on failing while their results wait to
     * be written: at the threshold the poller waits for the breaker's verdict.
     */
    private final Map<String, AtomicInteger> unreportedFailures = new HashMap<>();

    CircuitBreakers(BreakerStore store, QueueMetrics metrics, Map<String, BreakerOptions> guarded) {
        this.store = store;
        this.metrics = metrics;
        this.guarded = Map.copyOf(guarded);
        guarded.keySet().forEach(queue -> unreportedFailures.put(queue, new AtomicInteger()));
        guarded.keySet().forEach(metrics::registerBreaker);
    }

    /** A result was handed to the writer (on the handler's thread). */
    void accepted(String queue, JobResult.Kind kind) {
        if (kind == JobResult.Kind.FAIL && guards(queue)) {
            unreportedFailures.get(queue).incrementAndGet();
        }
    }

    /** A failed attempt's result will never be reported (shutdown gave up on writing it). */
    void dropped(String queue, JobResult.Kind kind) {
        if (kind == JobResult.Kind.FAIL && guards(queue)) {
            unreportedFailures.get(queue).decrementAndGet();
        }
    }

    /**
     * Whether the poller should wait before claiming: this node has handed over as many failed
     * attempts as open the breaker, and the breaker has not yet heard of them.
     */
    boolean awaitsVerdict(String queue) {
        AtomicInteger unreported = unreportedFailures.get(queue);
        return unreported != null && unreported.get() >= guarded.get(queue).failureThreshold();
    }

    boolean guards(String queue) {
        return guarded.containsKey(queue);
    }

    /**
     * Creates the breaker rows of the guarded queues that have none (closed). A row that could not
     * be created now is created before its breaker is first used.
     */
    void register() {
        for (String queue : guarded.keySet()) {
            try {
                ensureRegistered(queue);
            } catch (RuntimeException e) {
                log.warn("queue={} could not create its circuit breaker row yet: {}", queue, e.toString());
            }
        }
    }

    private void ensureRegistered(String queue) {
        if (!registered.contains(queue)) {
            store.register(queue);
            registered.add(queue);
        }
    }

    /** Probes granted to this poller by a breaker whose cooldown is over; zero otherwise. */
    int acquireProbes(String queue, int wanted) {
        BreakerOptions options = guarded.get(queue);
        ensureRegistered(queue);
        return store.acquireProbes(queue, wanted, options.halfOpenProbes(), options.cooldown())
                .map(grant -> {
                    if (grant.previous() != BreakerStatus.State.HALF_OPEN) {
                        transitioned(queue, grant.previous(), BreakerStatus.State.HALF_OPEN,
                                "cooldown of " + options.cooldown() + " over; letting " + options.halfOpenProbes()
                                        + " probe(s) through");
                    }
                    return grant.probes();
                })
                .orElse(0);
    }

    /** Probes that found no due job go back to the breaker for another poller; never throws. */
    void returnProbes(String queue, int unused) {
        if (unused > 0) {
            try {
                store.returnProbes(queue, unused);
            } catch (RuntimeException e) {
                log.warn("queue={} could not give back {} unused probes; they return with the next round: {}",
                        queue, unused, e.toString());
            }
        }
    }

    /** A new tally of outcomes, filled in the order results were recorded, for {@link #record}. */
    Tally tally() {
        return new Tally();
    }

    /**
     * Reports a batch's outcomes to the breakers through {@code recorder} (the result writer's own
     * connection, so a pool the application has emptied delays no outcome); a failure to do so is
     * logged and the outcomes dropped.
     */
    void record(Tally tally, BreakerStore recorder) {
        tally.byQueue.forEach((queue, counts) -> {
            BreakerOptions options = guarded.get(queue);
            try {
                if (counts.successes + counts.failures == 0) {
                    return;
                }
                if (!registered.contains(queue)) {
                    recorder.register(queue);
                    registered.add(queue);
                }
                recorder.record(queue, counts.successes, counts.failures, counts.trailingFailures,
                                options.failureThreshold(), options.cooldown())
                        .filter(BreakerStore.Transition::changed)
                        .ifPresent(change -> transitioned(queue, change.previous(), change.current(),
                                describe(change, options)));
            } catch (RuntimeException e) {
                log.warn("queue={} could not report {} outcomes to its circuit breaker: {}", queue,
                        counts.successes + counts.failures, e.toString());
            } finally {
                unreportedFailures.get(queue).addAndGet(-counts.failedAttemptsEnded);
            }
        });
    }

    private static String describe(BreakerStore.Transition change, BreakerOptions options) {
        if (change.current() == BreakerStatus.State.OPEN) {
            return change.previous() == BreakerStatus.State.HALF_OPEN
                    ? "a probe failed; open for another " + options.cooldown()
                    : change.failures() + " consecutive failures; no node claims its jobs for " + options.cooldown();
        }
        return "a probe succeeded";
    }

    private void transitioned(String queue, BreakerStatus.State from, BreakerStatus.State to, String why) {
        if (to == BreakerStatus.State.OPEN) {
            log.warn("queue={} circuit breaker {} -> {}: {}", queue, from.columnValue(), to.columnValue(), why);
        } else {
            log.info("queue={} circuit breaker {} -> {}: {}", queue, from.columnValue(), to.columnValue(), why);
        }
        metrics.breakerTransition(queue, to);
    }

    /** Outcomes of guarded queues in one written batch. */
    final class Tally {

        private final Map<String, Counts> byQueue = new HashMap<>();

        /** A result of {@code kind} was recorded, or found lost, with {@code outcome}. */
        void ended(String queue, JobResult.Kind kind, JobOutcome outcome) {
            if (!guards(queue)) {
                return;
            }
            Counts counts = byQueue.computeIfAbsent(queue, q -> new Counts());
            if (kind == JobResult.Kind.FAIL) {
                counts.failedAttemptsEnded++;
            }
            if (outcome == JobOutcome.SUCCESS) {
                counts.successes++;
                counts.trailingFailures = 0;
            } else if (outcome == JobOutcome.FAILURE) {
                counts.failures++;
                counts.trailingFailures++;
            }
        }

        boolean isEmpty() {
            return byQueue.isEmpty();
        }
    }

    private static final class Counts {
        int failedAttemptsEnded;
        int successes;
        int failures;
        int trailingFailures;
    }
}

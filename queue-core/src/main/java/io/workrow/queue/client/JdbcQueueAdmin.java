package io.workrow.queue.client;

import io.workrow.queue.BreakerStatus;
import io.workrow.queue.ConcurrencyCap;
import io.workrow.queue.DeadErrorGroup;
import io.workrow.queue.FairnessSetting;
import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.JobDetail;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueHold;
import io.workrow.queue.QueueStats;
import io.workrow.queue.RecurringStatus;
import io.workrow.queue.SnoozeJobException;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link QueueAdmin} on {@link JobStore}. Operations that move jobs log what they moved. */
public final class JdbcQueueAdmin implements QueueAdmin {

    private static final Logger log = LoggerFactory.getLogger(JdbcQueueAdmin.class);

    private final JobStore store;
    private final QueueMetrics metrics;

    public JdbcQueueAdmin(JobStore store) {
        this(store, QueueMetrics.NOOP);
    }

    /** @param metrics where breaker transitions made by hand are counted */
    public JdbcQueueAdmin(JobStore store, QueueMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    @Override
    public List<QueueStats> stats() {
        return store.queueStats();
    }

    @Override
    public List<JobSummary> runningJobs(String queue, int limit) {
        return store.listRunning(queue, limit);
    }

    @Override
    public List<JobSummary> deadJobs(String queue, String errorText, int limit) {
        return store.listDead(queue, errorText, limit);
    }

    @Override
    public List<DeadErrorGroup> deadErrorGroups(String queue, int limit) {
        return store.deadErrorGroups(queue, limit);
    }

    @Override
    public Optional<JobDetail> job(long id) {
        return store.find(id);
    }

    @Override
    public List<JobSummary> waitingJobs(String queue, int limit) {
        return store.listWaiting(queue, limit);
    }

    @Override
    public Optional<io.workrow.queue.JobDependencies> dependencies(long id) {
        return store.dependencies(id);
    }

    @Override
    public Optional<io.workrow.queue.BatchStatus> batch(long id) {
        return store.findBatch(id);
    }

    @Override
    public List<FinishedPerMinute> finishedPerMinute(Instant since) {
        return store.finishedPerMinute(Objects.requireNonNull(since, "since"));
    }

    @Override
    public int retryDead(String queue, Collection<Long> ids) {
        if (ids.isEmpty()) {
            return 0;
        }
        int retried = store.retryDead(ids, QueueNames.check(queue), null, null);
        log.info("Retried {} dead jobs of queue={} by id: ids={}", retried, queue, ids);
        return retried;
    }

    @Override
    public int retryDead(String queue, String errorText) {
        QueueNames.check(queue);
        int retried = store.retryDead(null, queue, errorText, null);
        log.info("Retried {} dead jobs of queue={} whose last error contains '{}'", retried, queue, errorText);
        return retried;
    }

    @Override
    public int retryDeadGroup(String queue, String errorKind) {
        QueueNames.check(queue);
        int retried = store.retryDead(null, queue, null, Objects.requireNonNull(errorKind, "errorKind"));
        log.info("Retried {} dead jobs of queue={} whose error is of kind '{}'", retried, queue, errorKind);
        return retried;
    }

    @Override
    public int cancelDead(String queue, Collection<Long> ids) {
        if (ids.isEmpty()) {
            return 0;
        }
        int cancelled = store.cancelDead(ids, QueueNames.check(queue), null);
        log.info("Cancelled {} dead jobs of queue={} by id: ids={}", cancelled, queue, ids);
        return cancelled;
    }

    @Override
    public int cancelDeadGroup(String queue, String errorKind) {
        int cancelled = store.cancelDead(null, QueueNames.check(queue), Objects.requireNonNull(errorKind, "errorKind"));
        log.info("Cancelled {} dead jobs of queue={} whose error is of kind '{}'", cancelled, queue, errorKind);
        return cancelled;
    }

    @Override
    public boolean cancel(String queue, long id) {
        boolean cancelled = store.cancel(QueueNames.check(queue), id);
        if (cancelled) {
            log.info("job={} queue={} cancelled", id, queue);
        }
        return cancelled;
    }

    @Override
    public void pause(String queue, String reason) {
        store.pauseQueue(QueueNames.check(queue), reason);
        log.info("queue={} paused on every node: {}", queue, reason);
    }

    @Override
    public boolean resume(String queue) {
        boolean resumed = store.resumeQueue(QueueNames.check(queue));
        if (resumed) {
            log.info("queue={} resumed", queue);
        }
        return resumed;
    }

    @Override
    public List<String> pausedQueues() {
        return store.pausedQueues();
    }

    @Override
    public List<QueueHold> holds() {
        return store.holds().list();
    }

    @Override
    public QueueHold hold(String queue, String partitionKey, Duration duration, String reason) {
        QueueNames.check(queue);
        if (duration == null || duration.isNegative() || duration.isZero()
                || duration.compareTo(SnoozeJobException.MAX_DELAY) > 0) {
            throw new IllegalArgumentException("a hold's duration must be positive and at most "
                    + SnoozeJobException.MAX_DELAY + ", was " + duration);
        }
        String why = reason == null || reason.isBlank() ? "held by hand" : "held by hand: " + reason;
        QueueHold hold = store.holds().hold(queue, partitionKey, duration, why, null);
        log.warn("queue={} {} held on every node until {} ({})", queue,
                partitionKey == null ? "whole queue" : "one partition key", hold.until(), why);
        return hold;
    }

    @Override
    public boolean releaseHold(String queue, String partitionKey) {
        return store.holds().release(QueueNames.check(queue), partitionKey).map(released -> {
            log.info("queue={} {} hold released by hand", queue,
                    partitionKey == null ? "whole-queue" : "partition key");
            return true;
        }).orElse(false);
    }

    @Override
    public List<ConcurrencyCap> concurrencyCaps() {
        return store.caps().list();
    }

    @Override
    public void setGlobalConcurrency(String queue, int cap, String reason) {
        setCap("global-concurrency", queue, cap, reason, store.caps()::set);
    }

    @Override
    public boolean clearGlobalConcurrency(String queue) {
        return clearCap("global-concurrency", queue, store.caps()::clear);
    }

    @Override
    public void setKeyConcurrency(String queue, int cap, String reason) {
        setCap("key-concurrency", queue, cap, reason, store.caps()::setPerKey);
    }

    @Override
    public boolean clearKeyConcurrency(String queue) {
        return clearCap("key-concurrency", queue, store.caps()::clearPerKey);
    }

    /** A cap stored by hand in place of the configured {@code property} on every node. */
    private interface CapSetter {
        void set(String queue, int cap, String reason);
    }

    private static void setCap(String property, String queue, int cap, String reason, CapSetter setter) {
        QueueNames.check(queue);
        if (cap < 1) {
            throw new IllegalArgumentException("a " + property + " cap must be at least 1, was " + cap);
        }
        String why = reason == null || reason.isBlank() ? "set by hand" : "set by hand: " + reason;
        setter.set(queue, cap, why);
        log.warn("queue={} {} {} on every node until cleared ({})", queue, property, cap, why);
    }

    private static boolean clearCap(String property, String queue, java.util.function.Predicate<String> clearer) {
        boolean cleared = clearer.test(QueueNames.check(queue));
        if (cleared) {
            log.info("queue={} {} set by hand cleared; its configured cap applies", queue, property);
        }
        return cleared;
    }

    @Override
    public List<BreakerStatus> breakers() {
        return store.breakers().list();
    }

    @Override
    public List<RecurringStatus> recurringJobs() {
        return store.recurring().list();
    }

    @Override
    public void openBreaker(String queue, String reason) {
        String why = reason == null || reason.isBlank() ? "opened by hand" : "opened by hand: " + reason;
        BreakerStatus.State previous = store.breakers().openByHand(QueueNames.check(queue), why);
        log.warn("queue={} circuit breaker {} -> open on every node until closed by hand ({})", queue,
                previous.columnValue(), why);
        if (previous != BreakerStatus.State.OPEN) {
            metrics.breakerTransition(queue, BreakerStatus.State.OPEN);
        }
    }

    @Override
    public boolean closeBreaker(String queue) {
        return store.breakers().closeByHand(QueueNames.check(queue), "closed by hand").map(previous -> {
            log.info("queue={} circuit breaker {} -> closed by hand", queue, previous.columnValue());
            if (previous != BreakerStatus.State.CLOSED) {
                metrics.breakerTransition(queue, BreakerStatus.State.CLOSED);
            }
            return true;
        }).orElse(false);
    }

    @Override
    public List<FairnessSetting> fairnessSettings(String queue, int limit) {
        return store.fairness().list(queue == null ? null : QueueNames.check(queue), limit);
    }

    @Override
    public FairnessSetting setFairness(String queue, String fairnessKey, Double weight, Integer ratePerMinute) {
        QueueNames.check(queue);
        if (fairnessKey == null) {
            throw new IllegalArgumentException("fairnessKey must be set (\"\" for the jobs without a key)");
        }
        if (weight == null && ratePerMinute == null) {
            throw new IllegalArgumentException("give a weight or a rate per minute; clearFairness removes a setting");
        }
        // Validates before the statement runs, with the same messages as a row read back.
        new FairnessSetting(queue, fairnessKey, weight, ratePerMinute, null);
        FairnessSetting set = store.fairness().set(queue, fairnessKey, weight, ratePerMinute);
        log.info("queue={} fairness key '{}' set: weight={} rate-per-minute={}", queue, fairnessKey, weight,
                ratePerMinute);
        return set;
    }

    @Override
    public boolean clearFairness(String queue, String fairnessKey) {
        boolean cleared = store.fairness().clear(QueueNames.check(queue), fairnessKey);
        if (cleared) {
            log.info("queue={} fairness key '{}' back to the defaults", queue, fairnessKey);
        }
        return cleared;
    }
}

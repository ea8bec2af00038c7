package io.workrow.queue.store;

import io.workrow.queue.QueueStats;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The statements about queues rather than their jobs, the same whatever the jobs' layout: pauses,
 * breakers, holds, caps, fairness settings, the worker registry, recurring jobs, queue rules, and the notify
 * channel. Each job store keeps one, on its own connections.
 */
final class QueueControls {

    private final JdbcTemplate timed;
    private final String channel;
    private final String queuePause;
    private final String queueResume;
    private final String queuePaused;
    final BreakerStore breakers;
    final HoldStore holds;
    final CapStore caps;
    final FairnessStore fairness;
    final WorkerStore workers;
    final RecurringStore recurring;
    final QueueRuleStore queueRules;

    /** @param timed the store's template, whose query timeout bounds every statement */
    QueueControls(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.channel = NotifyChannel.of(schema);
        this.queuePause = JobSql.render(JobSql.QUEUE_PAUSE, schema);
        this.queueResume = JobSql.render(JobSql.QUEUE_RESUME, schema);
        this.queuePaused = JobSql.render(JobSql.QUEUE_PAUSED, schema);
        this.breakers = new BreakerStore(timed, schema);
        this.holds = new HoldStore(timed, schema);
        this.caps = new CapStore(timed, schema);
        this.fairness = new FairnessStore(timed, schema);
        this.workers = new WorkerStore(timed, schema);
        this.recurring = new RecurringStore(timed, schema);
        this.queueRules = new QueueRuleStore(timed, schema);
    }

    String notifyChannel() {
        return channel;
    }

    void pauseQueue(String queue, String reason) {
        timed.update(queuePause, queue, reason);
    }

    boolean resumeQueue(String queue) {
        return !timed.query(queueResume, (rs, row) -> rs.getString("queue"), queue).isEmpty();
    }

    List<String> pausedQueues() {
        return timed.queryForList(queuePaused, String.class);
    }

    /**
     * Open work per queue as {@code QueueAdmin.stats} shows it: {@code depth}, with every paused
     * queue and every queue a runtime has declared rules for, so that an idle queue is listed too
     * (and can be paused from the page).
     */
    List<QueueStats> queueStats(List<QueueDepth> depth) {
        Map<String, QueueDepth> depths = new TreeMap<>();
        for (QueueDepth queue : depth) {
            depths.put(queue.queue(), queue);
        }
        Set<String> paused = new HashSet<>(pausedQueues());
        paused.forEach(queue -> depths.putIfAbsent(queue, QueueDepth.empty(queue)));
        queueRules.list().forEach(declared -> depths.putIfAbsent(declared.rule().queue(),
                QueueDepth.empty(declared.rule().queue())));
        return depths.values().stream().map(queue -> new QueueStats(queue.queue(), queue.pending(), queue.due(),
                queue.scheduled(), queue.running(), queue.dead(), queue.lag(), paused.contains(queue.queue()),
                queue.waiting()))
                .toList();
    }
}

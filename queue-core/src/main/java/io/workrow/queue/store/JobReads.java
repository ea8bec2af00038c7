package io.workrow.queue.store;

import io.workrow.queue.DeadErrorGroup;
import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.JobDetail;
import io.workrow.queue.JobStatus;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueAdmin;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;

/**
 * What operators, gauges and the dashboard read about jobs: depth per queue, running and dead
 * lists, dead jobs grouped by error, one job's detail, finished per minute, from the statements
 * of {@link JobSql}.
 */
final class JobReads {

    private static final RowMapper<JobSummary> JOB_SUMMARY = (rs, row) -> new JobSummary(rs.getLong("id"),
            rs.getString("queue"), JobStatus.fromColumn(rs.getString("status")), rs.getInt("attempts"),
            rs.getInt("max_attempts"), rs.getString("claimed_by"), instant(rs, "lease_expires_at"),
            instant(rs, "run_at"), rs.getString("last_error"), instant(rs, "last_error_at"),
            instant(rs, "created_at"), rs.getInt("lease_expiries"));

    private final JdbcTemplate timed;
    private final String queueDepth;
    private final String listRunning;
    private final String listDead;
    private final String deadErrorGroups;
    private final String createdAt;
    private final String result;
    private final String dependencies;
    private final String dependencyResults;
    private final String listWaiting;
    private final String waitsFor;
    private final String waitedOnBy;
    private final String deadErrorGroupsOfQueue;
    private final String find;
    private final String finishedPerMinute;

    JobReads(JdbcTemplate timed, String queueDepth, String listRunning, String listDead, String deadErrorGroups,
            String deadErrorGroupsOfQueue, String find, String finishedPerMinute, String createdAt, String result,
            String dependencies, String dependencyResults, String listWaiting, String waitsFor,
            String waitedOnBy) {
        this.listWaiting = listWaiting;
        this.waitsFor = waitsFor;
        this.waitedOnBy = waitedOnBy;
        this.timed = timed;
        this.queueDepth = queueDepth;
        this.listRunning = listRunning;
        this.listDead = listDead;
        this.deadErrorGroups = deadErrorGroups;
        this.deadErrorGroupsOfQueue = deadErrorGroupsOfQueue;
        this.find = find;
        this.finishedPerMinute = finishedPerMinute;
        this.createdAt = createdAt;
        this.result = result;
        this.dependencies = dependencies;
        this.dependencyResults = dependencyResults;
    }

    /** Open work per queue (pending, due, scheduled, running, dead, lag, waiting), from the partial indexes only. */
    public List<QueueDepth> queueDepth() {
        Map<String, long[]> counts = new TreeMap<>();
        Map<String, Double> lags = new HashMap<>();
        timed.query(queueDepth, (RowCallbackHandler) rs -> {
            long[] byStatus = counts.computeIfAbsent(rs.getString("queue"), queue -> new long[6]);
            switch (rs.getString("status")) {
                case "pending" -> {
                    byStatus[0] = rs.getLong("jobs");
                    byStatus[1] = rs.getLong("due");
                    lags.put(rs.getString("queue"), rs.getDouble("lag_seconds"));
                }
                case "scheduled" -> byStatus[2] = rs.getLong("jobs");
                case "running" -> byStatus[3] = rs.getLong("jobs");
                case "waiting" -> byStatus[5] = rs.getLong("jobs");
                default -> byStatus[4] = rs.getLong("jobs");
            }
        });
        List<QueueDepth> depths = new ArrayList<>(counts.size());
        counts.forEach((queue, byStatus) -> depths.add(new QueueDepth(queue, byStatus[0], byStatus[1], byStatus[2],
                byStatus[3], byStatus[4], seconds(lags.getOrDefault(queue, 0.0)), byStatus[5])));
        return depths;
    }
    /** Running jobs, oldest claim first; {@code queue} narrows the list when not null. */
    public List<JobSummary> listRunning(String queue, int limit) {
        return timed.query(listRunning, JOB_SUMMARY, queue, queue, limit);
    }
    /** Dead jobs, newest first; {@code queue} and {@code errorText} narrow the list when not null. */
    public List<JobSummary> listDead(String queue, String errorText, int limit) {
        return timed.query(listDead, JOB_SUMMARY, queue, queue, errorText, errorText, limit);
    }
    /** Dead jobs grouped by queue and kind of error, largest group first; {@code queue} null for all. */
    public List<DeadErrorGroup> deadErrorGroups(String queue, int limit) {
        RowMapper<DeadErrorGroup> group = (rs, row) -> new DeadErrorGroup(rs.getString("queue"),
                rs.getString("error"), rs.getLong("jobs"), instant(rs, "last_died_at"),
                List.of((Long[]) rs.getArray("newest_ids").getArray()), rs.getString("example"));
        return queue == null
                ? timed.query(deadErrorGroups, group, QueueAdmin.DEAD_GROUP_SAMPLE, limit)
                : timed.query(deadErrorGroupsOfQueue, group, queue, queue, queue, QueueAdmin.DEAD_GROUP_SAMPLE, limit);
    }
    /** One job's whole row, or empty. */
    public Optional<JobDetail> find(long id) {
        return timed.query(find, (rs, row) -> new JobDetail(rs.getLong("id"), rs.getString("queue"),
                JobStatus.fromColumn(rs.getString("status")), rs.getString("partition_key"),
                emptyAsNull(rs.getString("fairness_key")), rs.getString("idempotency_key"), rs.getInt("priority"),
                rs.getString("payload"), rs.getString("headers"), instant(rs, "run_at"), rs.getInt("attempts"),
                rs.getInt("max_attempts"), rs.getInt("lease_expiries"), rs.getString("last_error"),
                instant(rs, "last_error_at"), rs.getString("step"), rs.getString("claimed_by"),
                instant(rs, "lease_expires_at"), instant(rs, "created_at"), instant(rs, "started_at"),
                instant(rs, "finished_at"), instant(rs, "updated_at")), id).stream().findFirst();
    }
    /**
     * A completed job's result as JSON text, or empty: two statements, so that the second is
     * planned with the job's enqueue time as a constant and prunes the outcome days before it.
     */
    public Optional<String> resultJson(long id) {
        List<java.sql.Timestamp> created = timed.query(createdAt, (rs, row) -> rs.getTimestamp("created_at"), id);
        if (created.isEmpty()) {
            return Optional.empty();
        }
        return timed.query(result, (rs, row) -> Optional.ofNullable(rs.getString("result")), id,
                created.get(0).toInstant().toString()).stream().findFirst().flatMap(found -> found);
    }

    /** The results of the jobs job {@code id} waited for, by id in the order named; those with one only. */
    public Map<Long, String> dependencyResultsJson(long id) {
        Object[] listed = new Object[2];
        timed.query(dependencies, (RowCallbackHandler) rs -> {
            listed[0] = rs.getArray("ids").getArray();
            listed[1] = rs.getTimestamp("since");
        }, id);
        Long[] ids = (Long[]) listed[0];
        Map<Long, String> results = new java.util.LinkedHashMap<>();
        if (ids == null || listed[1] == null) {
            return results;
        }
        Map<Long, String> found = new HashMap<>();
        timed.query(connection -> {
            java.sql.PreparedStatement statement = connection.prepareStatement(dependencyResults);
            statement.setArray(1, connection.createArrayOf("int8", ids));
            statement.setTimestamp(2, (java.sql.Timestamp) listed[1]);
            return statement;
        }, (RowCallbackHandler) rs -> found.put(rs.getLong("id"), rs.getString("result")));
        for (Long dep : ids) {
            if (found.containsKey(dep)) {
                results.putIfAbsent(dep, found.get(dep));
            }
        }
        return results;
    }

    /** Jobs waiting for others, lowest id first; {@code queue} narrows the list when not null. */
    public List<JobSummary> listWaiting(String queue, int limit) {
        return timed.query(listWaiting, JOB_SUMMARY, queue, queue, limit);
    }

    /** Both sides of job {@code id}'s dependencies, at most {@link QueueAdmin#DEPENDENCIES_LISTED} each. */
    public Optional<io.workrow.queue.JobDependencies> dependencies(long id) {
        boolean[] found = {false};
        List<io.workrow.queue.JobDependencies.Link> waits = new ArrayList<>();
        timed.query(waitsFor, (RowCallbackHandler) rs -> {
            found[0] = true;
            long dep = rs.getLong("id");
            if (!rs.wasNull()) {
                waits.add(new io.workrow.queue.JobDependencies.Link(dep, rs.getString("queue"),
                        rs.getString("status") == null ? null : JobStatus.fromColumn(rs.getString("status")),
                        rs.getBoolean("settled")));
            }
        }, QueueAdmin.DEPENDENCIES_LISTED, id);
        if (!found[0]) {
            return Optional.empty();
        }
        long[] total = {0};
        List<io.workrow.queue.JobDependencies.Link> waited = new ArrayList<>();
        timed.query(waitedOnBy, (RowCallbackHandler) rs -> {
            total[0] = rs.getLong("total");
            long waiter = rs.getLong("id");
            if (!rs.wasNull()) {
                waited.add(new io.workrow.queue.JobDependencies.Link(waiter, rs.getString("queue"),
                        JobStatus.WAITING, rs.getBoolean("settled")));
            }
        }, id, id, QueueAdmin.DEPENDENCIES_LISTED);
        return Optional.of(new io.workrow.queue.JobDependencies(id, waits, waited, total[0]));
    }

    /** Jobs finished per queue and minute from the minute of {@code since} (at most a day back). */
    public List<FinishedPerMinute> finishedPerMinute(Instant since) {
        return timed.query(finishedPerMinute, (rs, row) -> new FinishedPerMinute(rs.getString("queue"),
                instant(rs, "minute"), rs.getLong("completed"), rs.getLong("dead")),
                OffsetDateTime.ofInstant(since.truncatedTo(java.time.temporal.ChronoUnit.MINUTES), ZoneOffset.UTC));
    }

    private static String emptyAsNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    private static Duration seconds(double seconds) {
        return Duration.ofMillis(Math.round(seconds * 1000));
    }

    /** A timestamp column as an instant, or null. */
    static Instant instant(java.sql.ResultSet rs, String column) throws java.sql.SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }
}

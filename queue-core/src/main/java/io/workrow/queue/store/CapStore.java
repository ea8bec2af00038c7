package io.workrow.queue.store;

import io.workrow.queue.ConcurrencyCap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * Runs the cap statements ({@link CapSql}) that are not part of a claim, one method per statement.
 * Reached through {@link JobStore#caps()}, on the same connections and statement timeout.
 */
public final class CapStore {

    /**
     * A queue's configured caps, cluster-wide and per key ({@code null}: none).
     *
     * @param global its {@code global-concurrency}
     * @param perKey its {@code key-concurrency}
     */
    public record Configured(Integer global, Integer perKey) {
    }

    /** A queue's configured caps as another worker had declared them. */
    public record DeclaredCap(String queue, Configured configured, String declaredBy) {
    }

    private static final RowMapper<ConcurrencyCap> CAP = (rs, row) -> new ConcurrencyCap(rs.getString("queue"),
            (Integer) rs.getObject("configured"), (Integer) rs.getObject("set_by_hand"), rs.getString("reason"),
            (Integer) rs.getObject("key_configured"), (Integer) rs.getObject("key_set_by_hand"),
            rs.getString("key_reason"), rs.getInt("running"));

    private final JdbcTemplate timed;
    private final String declare;
    private final String set;
    private final String setKey;
    private final String clear;
    private final String clearKey;
    private final String list;
    private final String queues;

    CapStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.declare = JobSql.render(CapSql.CAP_DECLARE, schema);
        this.set = JobSql.render(CapSql.CAP_SET, schema);
        this.setKey = JobSql.render(CapSql.CAP_SET_KEY, schema);
        this.clear = JobSql.render(CapSql.CAP_CLEAR, schema);
        this.clearKey = JobSql.render(CapSql.CAP_CLEAR_KEY, schema);
        this.list = JobSql.render(CapSql.CAP_LIST, schema);
        this.queues = JobSql.render(CapSql.CAP_QUEUES, schema);
    }

    /**
     * Declares the configured caps of {@code caps}' queues as {@code worker}'s; returns what other
     * workers had declared differently.
     */
    public List<DeclaredCap> declare(String worker, Map<String, Configured> caps) {
        if (caps.isEmpty()) {
            return List.of();
        }
        Map<String, Configured> sorted = new TreeMap<>(caps);
        return timed.query(connection -> {
            var statement = connection.prepareStatement(declare);
            statement.setArray(1, connection.createArrayOf("text", sorted.keySet().toArray()));
            statement.setArray(2, connection.createArrayOf("int4",
                    sorted.values().stream().map(Configured::global).toArray()));
            statement.setArray(3, connection.createArrayOf("int4",
                    sorted.values().stream().map(Configured::perKey).toArray()));
            statement.setString(4, worker);
            statement.setString(5, worker);
            return statement;
        }, (rs, row) -> new DeclaredCap(rs.getString("queue"), new Configured((Integer) rs.getObject("configured"),
                (Integer) rs.getObject("key_configured")), rs.getString("declared_by")));
    }

    /** Sets {@code queue}'s cluster-wide cap by hand; it wins over the configured one until cleared. */
    public void set(String queue, int cap, String reason) {
        timed.update(set, queue, cap, reason);
    }

    /** Sets {@code queue}'s per-key cap by hand; it wins over the configured one until cleared. */
    public void setPerKey(String queue, int cap, String reason) {
        timed.update(setKey, queue, cap, reason);
    }

    /** Clears {@code queue}'s cluster-wide cap set by hand; false when it had none. */
    public boolean clear(String queue) {
        return timed.update(clear, queue) > 0;
    }

    /** Clears {@code queue}'s per-key cap set by hand; false when it had none. */
    public boolean clearPerKey(String queue) {
        return timed.update(clearKey, queue) > 0;
    }

    /**
     * The queues with a cap in force, without counting their running jobs.
     *
     * @param global those with a cluster-wide cap
     * @param perKey those with a per-key cap
     */
    public record CappedQueues(java.util.Set<String> global, java.util.Set<String> perKey) {

        public CappedQueues {
            global = java.util.Set.copyOf(global);
            perKey = java.util.Set.copyOf(perKey);
        }
    }

    /** The queues with a cap in force, cluster-wide or per key. */
    public CappedQueues cappedQueues() {
        java.util.Set<String> global = new java.util.HashSet<>();
        java.util.Set<String> perKey = new java.util.HashSet<>();
        timed.query(queues, rs -> {
            if (rs.getBoolean("global")) {
                global.add(rs.getString("queue"));
            }
            if (rs.getBoolean("per_key")) {
                perKey.add(rs.getString("queue"));
            }
        });
        return new CappedQueues(global, perKey);
    }

    /** Every capped queue with its jobs claimed now. */
    public List<ConcurrencyCap> list() {
        return timed.query(list, CAP);
    }
}

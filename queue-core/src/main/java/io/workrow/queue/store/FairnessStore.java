package io.workrow.queue.store;

import io.workrow.queue.FairnessSetting;
import java.time.Duration;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * Runs the fair queues' setting and state statements ({@link FairnessSql}), one method per
 * statement. Reached through {@link JobStore#fairness()}, on the same connections and statement
 * timeout as the operator's other statements.
 */
public final class FairnessStore {

    private static final RowMapper<FairnessSetting> SETTING = (rs, row) -> new FairnessSetting(
            rs.getString("queue"), rs.getString("fairness_key"),
            rs.getObject("weight") == null ? null : rs.getDouble("weight"),
            rs.getObject("rate_per_minute") == null ? null : rs.getInt("rate_per_minute"),
            JobReads.instant(rs, "updated_at"));

    private final JdbcTemplate timed;
    private final String set;
    private final String clear;
    private final String list;
    private final String prune;
    private final String nextSpacedStart;

    FairnessStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.set = JobSql.render(FairnessSql.FAIRNESS_SET, schema);
        this.clear = JobSql.render(FairnessSql.FAIRNESS_CLEAR, schema);
        this.list = JobSql.render(FairnessSql.FAIRNESS_LIST, schema);
        this.prune = JobSql.render(FairnessSql.FAIRNESS_STATE_PRUNE, schema);
        this.nextSpacedStart = JobSql.render(FairnessSql.FAIRNESS_NEXT_SPACED_START, schema);
    }

    /** Sets {@code fairnessKey}'s weight and rate on {@code queue}; a null keeps what the key had. */
    public FairnessSetting set(String queue, String fairnessKey, Double weight, Integer ratePerMinute) {
        return timed.queryForObject(set, SETTING, queue, fairnessKey, weight, ratePerMinute);
    }

    /** Removes {@code fairnessKey}'s setting on {@code queue}; false when it had none. */
    public boolean clear(String queue, String fairnessKey) {
        return timed.update(clear, queue, fairnessKey) > 0;
    }

    /** Up to {@code limit} settings of {@code queue}, or of every queue when it is null, by queue and key. */
    public List<FairnessSetting> list(String queue, int limit) {
        return timed.query(list, SETTING, queue, queue, limit);
    }

    /** How long until a key of spaced {@code queue} may start again, or null when none is waiting for its spacing. */
    public Duration untilNextSpacedStart(String queue) {
        Double millis = timed.queryForObject(nextSpacedStart, Double.class, queue);
        return millis == null ? null : Duration.ofMillis((long) Math.ceil(millis));
    }

    /** Deletes up to {@code limit} state rows untouched for {@code idle}; returns how many. */
    public int pruneState(Duration idle, int limit) {
        return timed.update(prune, idle.toMillis(), limit);
    }
}

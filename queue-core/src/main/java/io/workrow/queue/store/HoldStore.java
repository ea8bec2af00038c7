package io.workrow.queue.store;

import io.workrow.queue.QueueHold;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * Runs the hold statements ({@link HoldSql}), one method per statement. Reached through
 * {@link JobStore#holds()}, on the same connections and statement timeout.
 */
public final class HoldStore {

    private static final RowMapper<QueueHold> HOLD = (rs, row) -> new QueueHold(rs.getString("queue"),
            "queue".equals(rs.getString("scope")) ? null : rs.getString("held_key"),
            JobReads.instant(rs, "until"), rs.getString("reason"), rs.getString("held_by"),
            JobReads.instant(rs, "held_at"));

    private final JdbcTemplate timed;
    private final String set;
    private final String release;
    private final String list;

    HoldStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.set = JobSql.render(HoldSql.HOLD_SET, schema);
        this.release = JobSql.render(HoldSql.HOLD_RELEASE, schema);
        this.list = JobSql.render(HoldSql.HOLD_LIST, schema);
    }

    /**
     * Holds {@code queue}, or only its {@code partitionKey} when not {@code null}, for
     * {@code duration} from now (an existing hold ends at the later time); returns the hold.
     */
    public QueueHold hold(String queue, String partitionKey, Duration duration, String reason, String heldBy) {
        return timed.queryForObject(set, HOLD, queue, scope(partitionKey), key(partitionKey),
                Math.max(0, duration.toMillis()), reason, heldBy);
    }

    /** Ends the live hold of {@code queue} (or of its {@code partitionKey}); empty when there was none. */
    public Optional<QueueHold> release(String queue, String partitionKey) {
        return timed.query(release, HOLD, queue, scope(partitionKey), key(partitionKey)).stream().findFirst();
    }

    /** The live holds, by queue. */
    public List<QueueHold> list() {
        return timed.query(list, HOLD);
    }

    private static String scope(String partitionKey) {
        return partitionKey == null ? "queue" : "key";
    }

    private static String key(String partitionKey) {
        return partitionKey == null ? "" : partitionKey;
    }
}

package io.workrow.queue.store;

import io.workrow.queue.RecurringStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the recurring job statements ({@link RecurringSql}), one method per statement. Reached
 * through {@link JobStore#recurring()}, on the same connections and statement timeout; each joins
 * the caller's transaction when there is one.
 */
public final class RecurringStore {

    private final JdbcTemplate timed;
    private final String declare;
    private final String advance;
    private final String list;

    RecurringStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.declare = JobSql.render(RecurringSql.RECURRING_DECLARE, schema);
        this.advance = JobSql.render(RecurringSql.RECURRING_ADVANCE, schema);
        this.list = JobSql.render(RecurringSql.RECURRING_LIST, schema);
    }

    /** What an entry's row held when this node declared it: its last tick and the schedule it had. */
    public record Declared(Instant lastTick, String previousCron, String previousZone) {

        /** Whether the row had another cron expression or zone before this declaration. */
        public boolean scheduleChanged(String cron, String zone) {
            return previousCron != null && (!previousCron.equals(cron) || !previousZone.equals(zone));
        }
    }

    /**
     * Declares an entry's schedule ({@code nextTick} null when its expression has no more); returns
     * the last tick enqueued for it (null if none ever was) and the schedule the row had.
     */
    public Declared declare(String name, String queue, String cron, String zone, Instant nextTick) {
        return timed.queryForObject(declare, (rs, row) -> new Declared(instant(rs, "last_tick"),
                rs.getString("previous_cron"), rs.getString("previous_zone")), name, name, queue, cron, zone,
                timestamp(nextTick));
    }

    /** Moves the entry's last tick to {@code tick} if it was behind; returns whether this call moved it. */
    public boolean advance(String name, Instant tick, Instant nextTick) {
        return !timed.queryForList(advance, String.class, timestamp(tick), timestamp(nextTick), name, timestamp(tick))
                .isEmpty();
    }

    /** Every declared entry, by name. */
    public List<RecurringStatus> list() {
        return timed.query(list, (rs, row) -> new RecurringStatus(rs.getString("name"), rs.getString("queue"),
                rs.getString("cron"), rs.getString("zone"), instant(rs, "last_tick"), instant(rs, "next_tick"),
                instant(rs, "declared_at")));
    }

    private static Timestamp timestamp(Instant instant) {
        return instant == null ? null : Timestamp.from(instant);
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp timestamp = rs.getTimestamp(column);
        return timestamp == null ? null : timestamp.toInstant();
    }
}

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
    private final String now;
    private final String advance;
    private final String list;

    RecurringStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.declare = JobSql.render(RecurringSql.RECURRING_DECLARE, schema);
        this.now = JobSql.render(RecurringSql.RECURRING_NOW, schema);
        this.advance = JobSql.render(RecurringSql.RECURRING_ADVANCE, schema);
        this.list = JobSql.render(RecurringSql.RECURRING_LIST, schema);
    }

    /**
     * Declares an entry's schedule ({@code nextTick} null when its expression has no more); returns
     * the last tick enqueued for it (null if none ever was), moved to {@code now} if the row had
     * another cron or zone.
     */
    public Instant declare(String name, String queue, String cron, String zone, Instant nextTick, Instant now) {
        return timed.queryForObject(declare, (rs, row) -> instant(rs, "last_tick"), name, queue, cron, zone,
                timestamp(nextTick), timestamp(now));
    }

    /** The database's clock. */
    public Instant now() {
        return timed.queryForObject(now, Timestamp.class).toInstant();
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

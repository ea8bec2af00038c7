package io.workrow.queue.store;

import io.workrow.queue.BreakerStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the circuit breaker statements ({@link BreakerSql}), one method per statement. Reached
 * through {@link JobStore#breakers()}, on the same connections and statement timeout.
 */
public final class BreakerStore {

    /** A state change a statement made: from {@code previous} to {@code current}. */
    public record Transition(BreakerStatus.State previous, BreakerStatus.State current, int failures) {

        public boolean changed() {
            return previous != current;
        }
    }

    private final JdbcTemplate timed;
    private final String register;
    private final String record;
    private final String acquireProbes;
    private final String returnProbes;
    private final String openByHand;
    private final String closeByHand;
    private final String list;

    BreakerStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.register = JobSql.render(BreakerSql.BREAKER_REGISTER, schema);
        this.record = JobSql.render(BreakerSql.BREAKER_RECORD, schema);
        this.acquireProbes = JobSql.render(BreakerSql.BREAKER_ACQUIRE_PROBES, schema);
        this.returnProbes = JobSql.render(BreakerSql.BREAKER_RETURN_PROBES, schema);
        this.openByHand = JobSql.render(BreakerSql.BREAKER_OPEN_BY_HAND, schema);
        this.closeByHand = JobSql.render(BreakerSql.BREAKER_CLOSE_BY_HAND, schema);
        this.list = JobSql.render(BreakerSql.BREAKER_LIST, schema);
    }

    /** Makes sure {@code queue} has a breaker row; an existing one keeps its state. */
    public void register(String queue) {
        timed.update(register, queue);
    }

    /**
     * Records one batch of outcomes; returns the change it made, or empty when nothing changed (or
     * the queue has no breaker row).
     *
     * @param trailingFailures the failures after the batch's last success
     */
    public Optional<Transition> record(String queue, int successes, int failures, int trailingFailures,
            int threshold, Duration cooldown) {
        return timed.query(record, (rs, row) -> new Transition(state(rs, "previous_state"), state(rs, "state"),
                        rs.getInt("failures")),
                queue, successes, failures, trailingFailures, threshold, cooldown.toMillis()).stream().findFirst();
    }

    /**
     * Takes up to {@code wanted} probes of a breaker whose cooldown is over, at most {@code probes}
     * per round; returns how many were granted (zero while closed or cooling down) and the state
     * the breaker had.
     */
    public Optional<ProbeGrant> acquireProbes(String queue, int wanted, int probes, Duration cooldown) {
        return timed.query(acquireProbes, (rs, row) -> new ProbeGrant(state(rs, "previous_state"), rs.getInt("probes")),
                queue, wanted, probes, cooldown.toMillis()).stream().findFirst();
    }

    /** Gives back {@code unused} probes that found no job. */
    public void returnProbes(String queue, int unused) {
        timed.update(returnProbes, unused, queue);
    }

    /** Opens the breaker of {@code queue} until it is closed by hand; returns the state it had. */
    public BreakerStatus.State openByHand(String queue, String reason) {
        register(queue);
        return timed.query(openByHand, (rs, row) -> state(rs, "previous_state"), queue, reason).get(0);
    }

    /** Closes the breaker of {@code queue} and wakes its pollers; returns the state it had, empty without a row. */
    public Optional<BreakerStatus.State> closeByHand(String queue, String reason) {
        return timed.query(closeByHand, (rs, row) -> state(rs, "previous_state"), queue, reason).stream().findFirst();
    }

    /** Every breaker row, by queue. */
    public List<BreakerStatus> list() {
        return timed.query(list, (rs, row) -> new BreakerStatus(rs.getString("queue"), state(rs, "state"),
                rs.getInt("failures"), openUntil(rs), JobReads.instant(rs, "changed_at"), rs.getString("reason")));
    }

    /** Probes granted to one poller, and the state the breaker had before. */
    public record ProbeGrant(BreakerStatus.State previous, int probes) {
    }

    private static BreakerStatus.State state(ResultSet rs, String column) throws SQLException {
        return BreakerStatus.State.fromColumn(rs.getString(column));
    }

    private static Instant openUntil(ResultSet rs) throws SQLException {
        // 'infinity' (opened by hand) has no Instant: reported as null, "until closed by hand".
        String text = rs.getString("open_until");
        return text == null || text.equals("infinity") ? null : JobReads.instant(rs, "open_until");
    }
}

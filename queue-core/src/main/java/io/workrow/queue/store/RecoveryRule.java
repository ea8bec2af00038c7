package io.workrow.queue.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * How one queue recovers a job whose lease expired, in the form the sweep statement takes: wait
 * {@code initial * multiplier^(attempt-1)} milliseconds, capped at {@code max}, spread by up to
 * {@code ±jitter}; and with {@code maxLeaseExpiries} above zero, retire the job once its lease has
 * expired that many times, without spending its attempts on expiries.
 *
 * @param queue the queue, or {@code null} for the default of queues not named
 * @param maxAttempts the attempts the queue's jobs get when their enqueue names none, declared with
 *     the rule for {@code workrow_enqueue}; {@code null} when not known (the sweeper needs none)
 */
public record RecoveryRule(String queue, long initialMillis, double multiplier, long maxMillis, double jitter,
        int maxLeaseExpiries, Integer maxAttempts) {

    /** A rule without the queue's attempts. */
    public RecoveryRule(String queue, long initialMillis, double multiplier, long maxMillis, double jitter,
            int maxLeaseExpiries) {
        this(queue, initialMillis, multiplier, maxMillis, jitter, maxLeaseExpiries, null);
    }

    /**
     * Binds {@code rules} as six parallel arrays (queue, initial ms, multiplier, max ms, jitter,
     * max lease expiries) from parameter {@code first} on, as the sweep and the declaration take
     * them.
     */
    static void bindArrays(PreparedStatement statement, int first, List<RecoveryRule> rules) throws SQLException {
        Connection connection = statement.getConnection();
        statement.setArray(first, connection.createArrayOf("text", rules.stream().map(RecoveryRule::queue).toArray()));
        statement.setArray(first + 1, connection.createArrayOf("int8",
                rules.stream().map(RecoveryRule::initialMillis).toArray()));
        statement.setArray(first + 2, connection.createArrayOf("float8",
                rules.stream().map(RecoveryRule::multiplier).toArray()));
        statement.setArray(first + 3, connection.createArrayOf("int8",
                rules.stream().map(RecoveryRule::maxMillis).toArray()));
        statement.setArray(first + 4, connection.createArrayOf("float8",
                rules.stream().map(RecoveryRule::jitter).toArray()));
        statement.setArray(first + 5, connection.createArrayOf("int4",
                rules.stream().map(RecoveryRule::maxLeaseExpiries).toArray()));
    }
}

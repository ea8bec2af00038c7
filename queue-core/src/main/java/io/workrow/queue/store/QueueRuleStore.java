package io.workrow.queue.store;

import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * Runs the queue rule statements ({@link QueueRuleSql}), one method per statement. Reached
 * through {@link JobStore#queueRules()}, on the same connections and statement timeout.
 */
public final class QueueRuleStore {

    /** A queue's rule as declared, and by which worker. */
    public record DeclaredRule(RecoveryRule rule, String declaredBy) {
    }

    private static final RowMapper<DeclaredRule> DECLARED = (rs, row) -> new DeclaredRule(new RecoveryRule(
            rs.getString("queue"), rs.getLong("backoff_initial_ms"), rs.getDouble("backoff_multiplier"),
            rs.getLong("backoff_max_ms"), rs.getDouble("backoff_jitter"), rs.getInt("max_lease_expiries"),
            (Integer) rs.getObject("max_attempts")),
            rs.getString("declared_by"));

    private final JdbcTemplate timed;
    private final String declare;
    private final String list;

    QueueRuleStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.declare = JobSql.render(QueueRuleSql.QUEUE_RULE_DECLARE, schema);
        this.list = JobSql.render(QueueRuleSql.QUEUE_RULE_LIST, schema);
    }

    /**
     * Declares {@code rules} as {@code worker}'s; returns the rules they replaced where another
     * worker had declared different ones.
     */
    public List<DeclaredRule> declare(String worker, List<RecoveryRule> rules) {
        if (rules.isEmpty()) {
            return List.of();
        }
        return timed.query(connection -> {
            var statement = connection.prepareStatement(declare);
            RecoveryRule.bindArrays(statement, 1, rules);
            statement.setArray(7, connection.createArrayOf("int4",
                    rules.stream().map(RecoveryRule::maxAttempts).toArray()));
            statement.setString(8, worker);
            statement.setString(9, worker);
            return statement;
        }, DECLARED);
    }

    /** Every queue's declared rules, by queue. */
    public List<DeclaredRule> list() {
        return timed.query(list, DECLARED);
    }
}

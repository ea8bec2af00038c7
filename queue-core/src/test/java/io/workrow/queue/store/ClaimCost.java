package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The buffers one run of a claim statement touches, from EXPLAIN (ANALYZE, BUFFERS), rolled back afterwards. */
final class ClaimCost {

    private static final Pattern BUFFERS = Pattern.compile("Buffers: shared hit=(\\d+)(?: read=(\\d+))?");

    private ClaimCost() {
    }

    /**
     * Runs the claim statement named {@code name} (a constant of {@link JobSql} with named
     * parameters) bound to {@code values}.
     */
    static int buffers(WorkrowTestDatabase database, String name, Map<String, Object> values) throws Exception {
        String statement = (String) JobSql.class.getDeclaredField(name).get(null);
        NamedStatement explain = NamedStatement.parse("EXPLAIN (ANALYZE, BUFFERS) "
                + JobSql.render(statement, database.schema()));
        return measure(database, connection -> explain.bind(values).createPreparedStatement(connection));
    }

    /** Runs {@code sql}, a rendered statement whose values are written in. */
    static int buffers(WorkrowTestDatabase database, String sql) throws SQLException {
        return measure(database, connection -> connection.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) " + sql));
    }

    private interface Explain {
        PreparedStatement prepare(Connection connection) throws SQLException;
    }

    private static int measure(WorkrowTestDatabase database, Explain explain) throws SQLException {
        try (Connection connection = database.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            try (PreparedStatement prepared = explain.prepare(connection); ResultSet rs = prepared.executeQuery()) {
                StringBuilder plan = new StringBuilder();
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
                Matcher matcher = BUFFERS.matcher(plan);
                assertThat(matcher.find()).as(plan.toString()).isTrue();
                return Integer.parseInt(matcher.group(1)) + (matcher.group(2) == null ? 0 : Integer.parseInt(matcher.group(2)));
            } finally {
                connection.rollback();
            }
        }
    }
}

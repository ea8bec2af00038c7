package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The buffers one run of a named-parameter claim statement touches, rolled back afterwards. */
final class ClaimCost {

    private static final Pattern BUFFERS = Pattern.compile("Buffers: shared hit=(\\d+)(?: read=(\\d+))?");

    private ClaimCost() {
    }

    /** Runs {@code statement} (a {@link JobSql} constant) under EXPLAIN (ANALYZE, BUFFERS) and rolls it back. */
    static int buffers(WorkrowTestDatabase database, String statement, Map<String, Object> values) throws Exception {
        NamedStatement explain = NamedStatement.parse("EXPLAIN (ANALYZE, BUFFERS) "
                + JobSql.render(statement, database.schema()));
        try (Connection connection = database.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            try (PreparedStatement prepared = explain.bind(values).createPreparedStatement(connection);
                    ResultSet rs = prepared.executeQuery()) {
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

package io.workrow.queue.store;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** What the plan tests share: a statement's plan, custom or generic, and the statements to plan. */
final class PlanExplain {

    private PlanExplain() {
    }

    /**
     * The plan of {@code sql} prepared with parameter {@code types} and run with {@code arguments}
     * (SQL literals), under {@code mode}: {@code force_custom_plan} or {@code force_generic_plan},
     * the plan a prepared statement falls back to after five runs.
     */
    static String explain(Connection connection, String sql, String types, String arguments, String mode)
            throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET plan_cache_mode = " + mode);
            statement.execute("PREPARE checked" + (types.isEmpty() ? "" : "(" + types + ")") + " AS " + numbered(sql));
            try {
                return text(statement.executeQuery("EXPLAIN EXECUTE checked"
                        + (arguments.isEmpty() ? "" : "(" + arguments + ")")));
            } finally {
                statement.execute("DEALLOCATE checked");
                statement.execute("RESET plan_cache_mode");
            }
        }
    }

    /** JDBC's {@code ?} placeholders as PostgreSQL's {@code $1, $2, ...}. */
    static String numbered(String sql) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (char c : sql.toCharArray()) {
            if (c == '?') {
                out.append('$').append(++n);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** The names of the statement constants of {@code statements} (its non-private static strings). */
    static List<String> statementNames(Class<?> statements) {
        List<String> names = new ArrayList<>();
        for (Field field : statements.getDeclaredFields()) {
            // Private constants are fragments the statements are built from, not statements.
            if (Modifier.isStatic(field.getModifiers()) && !Modifier.isPrivate(field.getModifiers())
                    && field.getType() == String.class) {
                names.add(field.getName());
            }
        }
        return names;
    }

    private static String text(ResultSet rows) throws SQLException {
        StringBuilder plan = new StringBuilder();
        while (rows.next()) {
            plan.append(rows.getString(1)).append('\n');
        }
        return plan.toString();
    }
}

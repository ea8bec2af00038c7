package io.workrow.queue.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.jdbc.core.PreparedStatementCreator;

/**
 * A statement whose parameters are named ({@code :queue}) rather than counted, for the long claim
 * statements that use one value in several places. Parsed once; each {@code :name} becomes a
 * {@code ?} bound from a map by name. A cast ({@code ::int}) is not a parameter.
 */
final class NamedStatement {

    private static final Pattern PARAMETER = Pattern.compile("(?<!:):([a-z_]+)");

    private final String sql;
    private final List<String> names;

    private NamedStatement(String sql, List<String> names) {
        this.sql = sql;
        this.names = names;
    }

    static NamedStatement parse(String sql) {
        List<String> names = new ArrayList<>();
        Matcher matcher = PARAMETER.matcher(sql);
        StringBuilder positional = new StringBuilder();
        while (matcher.find()) {
            names.add(matcher.group(1));
            matcher.appendReplacement(positional, "?");
        }
        matcher.appendTail(positional);
        return new NamedStatement(positional.toString(), List.copyOf(names));
    }

    /**
     * Binds {@code values} by name; a {@code int[]} or {@code String[]} value becomes a SQL array.
     * Every name in the statement must have a value.
     */
    PreparedStatementCreator bind(Map<String, Object> values) {
        return connection -> {
            PreparedStatement statement = connection.prepareStatement(sql);
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                if (!values.containsKey(name)) {
                    throw new IllegalArgumentException("No value for :" + name);
                }
                statement.setObject(i + 1, value(connection, values.get(name)));
            }
            return statement;
        };
    }

    private static Object value(Connection connection, Object value) throws SQLException {
        if (value instanceof int[] ints) {
            Integer[] boxed = new Integer[ints.length];
            for (int i = 0; i < ints.length; i++) {
                boxed[i] = ints[i];
            }
            return connection.createArrayOf("int4", boxed);
        }
        if (value instanceof String[] strings) {
            return connection.createArrayOf("text", strings);
        }
        return value;
    }

    @Override
    public String toString() {
        return sql;
    }
}

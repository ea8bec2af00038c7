package io.workrow.queue.store;

import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** Finds the schema Workrow uses when none is configured: the connection's current schema. */
public final class SchemaLookup {

    private SchemaLookup() {
    }

    /**
     * The schema the connection resolves unqualified names to ({@code current_schema()}), checked
     * like a configured one.
     */
    public static SqlIdentifier currentSchema(DataSource dataSource) {
        String name = new JdbcTemplate(dataSource).queryForObject("SELECT current_schema()", String.class);
        if (name == null) {
            throw new IllegalStateException("The connection has no current schema (its search_path names no "
                    + "existing schema); set the Workrow schema explicitly");
        }
        return SqlIdentifier.of("current_schema()", name);
    }
}

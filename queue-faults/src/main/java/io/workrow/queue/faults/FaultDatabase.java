package io.workrow.queue.faults;

import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The database a fault run works in: Workrow's tables migrated in its {@code public} schema,
 * and how worker JVMs reach it.
 */
record FaultDatabase(DataSource dataSource, String jdbcUrl, String user, String password) {

    FaultDatabase {
        password = password == null ? "" : password;
    }

    JdbcTemplate jdbc() {
        return new JdbcTemplate(dataSource);
    }
}

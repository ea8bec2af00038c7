package io.workrow.queue.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Gives a test class its own freshly created PostgreSQL database, with Workrow's schema migrated,
 * on the server {@link PostgresServer} picks; the database is dropped after the class. Register
 * it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final WorkrowTestDatabase database = new WorkrowTestDatabase();
 * }</pre>
 */
public final class WorkrowTestDatabase implements BeforeAllCallback, AfterAllCallback {

    private final SqlIdentifier schema;
    private final boolean migrate;
    private PostgresServer server;
    private String name;
    private HikariDataSource dataSource;
    private String ownerId;

    /** A database with Workrow's tables in {@code public}. */
    public WorkrowTestDatabase() {
        this("public", true);
    }

    private WorkrowTestDatabase(String schema, boolean migrate) {
        this.schema = SqlIdentifier.of("schema", schema);
        this.migrate = migrate;
    }

    /** A database with nothing created in it, for tests of the migrations themselves. */
    public static WorkrowTestDatabase empty() {
        return new WorkrowTestDatabase("public", false);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws SQLException {
        if (ownerId != null) {
            return; // a @Nested class shares its enclosing class's database
        }
        ownerId = context.getUniqueId();
        server = PostgresServer.get();
        name = ("workrow_test_" + context.getRequiredTestClass().getSimpleName().toLowerCase(Locale.ROOT))
                .replaceAll("[^a-z0-9_]", "_");
        name = name.substring(0, Math.min(name.length(), 50)) + "_"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000000, Integer.MAX_VALUE));
        admin("CREATE DATABASE " + name);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.urlOf(name));
        config.setUsername(server.user());
        config.setPassword(server.password());
        config.setMaximumPoolSize(40);
        config.setPoolName(name);
        dataSource = new HikariDataSource(config);
        if (migrate) {
            new WorkrowMigrations(dataSource, schema).migrate();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws SQLException {
        if (!context.getUniqueId().equals(ownerId)) {
            return;
        }
        ownerId = null;
        if (dataSource != null) {
            dataSource.close();
        }
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public JdbcTemplate jdbc() {
        return new JdbcTemplate(dataSource);
    }

    public SqlIdentifier schema() {
        return schema;
    }

    public JobStore store() {
        return new JobStore(dataSource, schema);
    }

    /** The database's name on the server. */
    public String name() {
        return name;
    }

    public String jdbcUrl() {
        return server.urlOf(name);
    }

    public PostgresServer server() {
        return server;
    }

    /** Deletes every job and fair queue setting, for tests that share the class's database between methods. */
    public void deleteAllJobs() {
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_job");
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_fairness_state");
        jdbc().update("DELETE FROM " + schema.quoted() + ".workrow_fairness_key");
    }

    private void admin(String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(server.adminUrl(), server.user(), server.password());
             Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}

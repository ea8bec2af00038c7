package io.workrow.queue.test.database;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One database created for a test class on the {@link PostgresServer}, and dropped when the class
 * is done. Its name starts with {@code workrow_test_} and the class's name, and ends with a random
 * suffix, so test JVMs running at once never share one.
 */
public final class TestDatabase {

    private static final int MAX_STEM = 50;

    private final PostgresServer server;
    private final String name;

    private TestDatabase(PostgresServer server, String name) {
        this.server = server;
        this.name = name;
    }

    /** Creates a fresh, empty database named for {@code testClass}. */
    public static TestDatabase createFor(Class<?> testClass) {
        PostgresServer server = PostgresServer.get();
        String stem = ("workrow_test_" + testClass.getSimpleName().toLowerCase(Locale.ROOT))
                .replaceAll("[^a-z0-9_]", "_");
        String name = stem.substring(0, Math.min(stem.length(), MAX_STEM)) + "_"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000000, Integer.MAX_VALUE));
        TestDatabase database = new TestDatabase(server, name);
        database.admin("CREATE DATABASE " + name);
        return database;
    }

    /** Drops the database, ending any session still connected to it. */
    public void drop() {
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }

    public String name() {
        return name;
    }

    public String jdbcUrl() {
        return server.urlOf(name);
    }

    public String user() {
        return server.user();
    }

    public String password() {
        return server.password();
    }

    public PostgresServer server() {
        return server;
    }

    private void admin(String sql) {
        try (Connection connection = DriverManager.getConnection(server.adminUrl(), server.user(), server.password());
             Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("Could not run '" + sql + "' on " + server.adminUrl() + " (from "
                    + server.origin() + ") as " + server.user() + ": " + e.getMessage(), e);
        }
    }
}

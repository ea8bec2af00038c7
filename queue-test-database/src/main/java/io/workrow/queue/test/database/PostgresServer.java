package io.workrow.queue.test.database;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The PostgreSQL server a test JVM creates its databases on, chosen once: {@code WORKROW_TEST_JDBC_URL}
 * (with {@code WORKROW_TEST_JDBC_USER} and {@code _PASSWORD}) when set; else a Testcontainers
 * PostgreSQL when a Docker engine answers; else {@code jdbc:postgresql://localhost:5432/postgres}
 * as {@code postgres}. The user must be allowed to create databases.
 *
 * @param adminUrl a JDBC URL of a database on the server from which test databases are created
 * @param origin where the server came from, for the log
 */
public record PostgresServer(String adminUrl, String user, String password, String origin) {

    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);

    /** The variable naming an explicit server; {@code _USER} and {@code _PASSWORD} go with it. */
    public static final String URL_VARIABLE = "WORKROW_TEST_JDBC_URL";

    private static final Pattern DATABASE_IN_URL = Pattern.compile("^(jdbc:postgresql://[^/?]*/)[^?]*");
    private static final String LOCAL_URL = "jdbc:postgresql://localhost:5432/postgres";
    private static final String IMAGE = "postgres:15-alpine";

    private static PostgresServer resolved;

    /** The server for this JVM, resolved on first use. */
    public static synchronized PostgresServer get() {
        if (resolved == null) {
            resolved = resolve();
            log.info("Workrow tests use PostgreSQL from {}: {}", resolved.origin(), resolved.adminUrl());
        }
        return resolved;
    }

    private static PostgresServer resolve() {
        String url = System.getenv(URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            return new PostgresServer(url, envOr(URL_VARIABLE.replace("_URL", "_USER"), "postgres"),
                    envOr(URL_VARIABLE.replace("_URL", "_PASSWORD"), ""), URL_VARIABLE);
        }
        if (dockerAvailable()) {
            PostgreSQLContainer container = new PostgreSQLContainer(IMAGE);
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "workrow-test-postgres-stop"));
            return new PostgresServer(container.getJdbcUrl(), container.getUsername(), container.getPassword(),
                    "Testcontainers (" + IMAGE + ")");
        }
        return new PostgresServer(LOCAL_URL, "postgres", "", "the local server (no " + URL_VARIABLE
                + ", no Docker engine found)");
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable e) {
            return false;
        }
    }

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null ? fallback : value;
    }

    /** The JDBC URL of {@code database} on this server, with the admin URL's parameters. */
    public String urlOf(String database) {
        Matcher url = DATABASE_IN_URL.matcher(adminUrl);
        if (!url.find()) {
            throw new IllegalStateException("Cannot tell the database in " + adminUrl + " (from " + origin
                    + "); give a URL of the form jdbc:postgresql://host:port/database");
        }
        return url.replaceFirst("$1" + database);
    }
}

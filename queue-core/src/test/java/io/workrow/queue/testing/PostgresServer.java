package io.workrow.queue.testing;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The PostgreSQL server tests run against, chosen once per JVM: {@code WORKROW_TEST_JDBC_URL}
 * (with {@code WORKROW_TEST_JDBC_USER} / {@code _PASSWORD}) when set; else a Testcontainers
 * PostgreSQL when a Docker engine answers; else {@code jdbc:postgresql://localhost:5432/postgres}
 * as {@code postgres}.
 *
 * @param adminUrl a JDBC URL of a database on the server from which test databases are created
 */
public record PostgresServer(String adminUrl, String user, String password, String origin) {

    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);

    private static final String LOCAL_URL = "jdbc:postgresql://localhost:5432/postgres";

    private static PostgresServer resolved;

    /** The server for this JVM, resolved on first use. */
    public static synchronized PostgresServer get() {
        if (resolved == null) {
            resolved = resolve();
            log.info("Tests use PostgreSQL from {}: {}", resolved.origin(), resolved.adminUrl());
        }
        return resolved;
    }

    private static PostgresServer resolve() {
        String url = System.getenv("WORKROW_TEST_JDBC_URL");
        if (url != null && !url.isBlank()) {
            return new PostgresServer(url, envOr("WORKROW_TEST_JDBC_USER", "postgres"),
                    envOr("WORKROW_TEST_JDBC_PASSWORD", ""), "WORKROW_TEST_JDBC_URL");
        }
        if (dockerAvailable()) {
            PostgreSQLContainer container = new PostgreSQLContainer("postgres:15-alpine");
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop));
            return new PostgresServer(container.getJdbcUrl(), container.getUsername(), container.getPassword(),
                    "Testcontainers");
        }
        return new PostgresServer(LOCAL_URL, "postgres", "", "the local server (no Docker engine found)");
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
        return adminUrl.replaceFirst("^(jdbc:postgresql://[^/]*/)[^?]*", "$1" + database);
    }
}

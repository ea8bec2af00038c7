package io.workrow.queue.benchmark.compare;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The scratch database every contender shares, and how to start a process against it: the JDBC
 * URL for the JVMs, a {@code postgres://} URL for the Node peers, this JVM's classpath.
 */
record BenchDatabase(String jdbcUrl, String user, HikariDataSource dataSource, Path logDirectory) {

    private static final AtomicInteger PROCESSES = new AtomicInteger();

    static BenchDatabase open(String jdbcUrl, String user, Path logDirectory) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setMaximumPoolSize(12);
        return new BenchDatabase(jdbcUrl, user, new HikariDataSource(config), logDirectory);
    }

    JdbcTemplate jdbc() {
        return new JdbcTemplate(dataSource);
    }

    long count(String sql) {
        Long count = jdbc().queryForObject(sql, Long.class);
        return count == null ? 0 : count;
    }

    /** The same database as a libpq URL, for the Node peers' {@code pg}. */
    Map<String, String> nodeEnvironment() {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        return Map.of("BENCH_DATABASE_URL", "postgres://" + user + "@" + uri.getHost() + ":" + uri.getPort() + uri.getPath());
    }

    /**
     * {@code java -Xmx256m [$BENCH_WORKER_JVM_OPTS] -cp <this classpath> <main> <arguments>}; the
     * environment variable adds options to every worker JVM, a flight recording for instance, with
     * each {@code %n} replaced by the process's number in this run (a file of its own each).
     */
    List<String> javaCommand(String mainClass, List<String> arguments) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-Xmx256m"));
        String extra = System.getenv("BENCH_WORKER_JVM_OPTS");
        if (extra != null && !extra.isBlank()) {
            String number = Integer.toString(PROCESSES.incrementAndGet());
            for (String option : extra.trim().split("\\s+")) {
                command.add(option.replace("%n", number));
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(arguments);
        return command;
    }
}

package io.workrow.queue.faults;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.SqlIdentifier;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The fault scenarios: worker JVMs killed, frozen and stopped while they hold jobs, each followed
 * by a full drain and a {@link FaultChecker} run. Each scenario returns its figures, the
 * invariants among them ({@link FaultChecker#INVARIANTS}) 0 when Workrow kept its promises.
 *
 * <p>The scenarios live in classes by what they break ({@link CrashScenarios},
 * {@link DatabaseScenarios}, {@link InputScenarios}, {@link TimingScenarios},
 * {@link SoakScenario}), on one {@link FaultFleet} of worker JVMs. Run the full form with {@code queue-faults/scripts/fault-suite.sh}; the tests run the
 * short form ({@link Scale#SHORT}).
 */
public final class FaultSuite {

    /** How big each scenario is. */
    public record Scale(int killJobs, int kills, int pauseJobs, int longJobs, int shutdownJobs, int restartSeconds,
            int pickupJobs, int bouncerJobs, int soakSeconds) {
        /** For CI: every scenario, fewer jobs and kills, a short soak. */
        public static final Scale SHORT = new Scale(3_000, 2, 1_500, 24, 400, 6, 50, 1_500, 30);
        /** The figures in docs/reliability.md: the soak runs ten minutes. */
        public static final Scale FULL = new Scale(30_000, 10, 6_000, 48, 400, 20, 200, 6_000, 600);
    }

    /** Every scenario, by the name its figures carry. */
    public static final List<String> SCENARIOS = List.of("kill-9", "sigstop", "long-jobs", "sigterm", "capped-kill-9", "pg-restart",
            "listener", "pgbouncer", "poison", "idempotency", "clock-skew", "retry-storm", "held-xmin", "pool-exhaustion",
            "soak");

    private final FaultFleet fleet;
    private final Map<String, Supplier<Map<String, Object>>> scenarios = new LinkedHashMap<>();

    FaultSuite(FaultDatabase database, Scale scale, Path logDirectory) {
        this.fleet = new FaultFleet(database, scale, logDirectory);
        Ledgers.install(fleet.jdbc());
        scenarios.putAll(new CrashScenarios(fleet).byName());
        scenarios.putAll(new DatabaseScenarios(fleet).byName());
        scenarios.putAll(new InputScenarios(fleet).byName());
        scenarios.putAll(new TimingScenarios(fleet).byName());
        scenarios.putAll(new SoakScenario(fleet).byName());
        if (!scenarios.keySet().equals(Set.copyOf(SCENARIOS))) {
            throw new IllegalStateException("SCENARIOS " + SCENARIOS + " does not name the scenarios " + scenarios.keySet());
        }
    }

    /** Runs one scenario by name. */
    Map<String, Object> run(String scenario) {
        Supplier<Map<String, Object>> body = scenarios.get(scenario);
        if (body == null) {
            throw new IllegalArgumentException("No scenario " + scenario + "; there are " + SCENARIOS);
        }
        Ledgers.clear(fleet.jdbc());
        long startedAt = System.nanoTime();
        try {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("scenario", scenario);
            figures.putAll(body.get());
            figures.put("seconds", Math.round((System.nanoTime() - startedAt) / 1e8) / 10.0);
            return figures;
        } finally {
            fleet.destroyAll();
        }
    }

    /** One JSON object on one line: numbers as they are, everything else as a string. */
    static String json(Map<String, Object> figures) {
        return figures.entrySet().stream()
                .map(entry -> quoted(entry.getKey()) + ":" + (entry.getValue() instanceof Number
                        ? entry.getValue().toString() : quoted(String.valueOf(entry.getValue()))))
                .collect(Collectors.joining(",", "{", "}"));
    }

    private static String quoted(String text) {
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                default -> quoted.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return quoted.append('"').toString();
    }

    /**
     * Runs the scenarios named in the arguments (all without) at full scale in a scratch database
     * {@code workrow_faults}, dropped and created again, on the server of
     * {@code -Dfaults.jdbc.url} (default the local server), and prints one JSON line per scenario.
     */
    public static void main(String[] args) {
        String serverUrl = System.getProperty("faults.jdbc.url", "jdbc:postgresql://localhost:5432/postgres");
        String user = System.getProperty("faults.jdbc.user", "postgres");
        String password = System.getProperty("faults.jdbc.password", "");
        try (HikariDataSource admin = pool(serverUrl, user, password, 1)) {
            new JdbcTemplate(admin).execute("DROP DATABASE IF EXISTS workrow_faults WITH (FORCE)");
            new JdbcTemplate(admin).execute("CREATE DATABASE workrow_faults");
        }
        String url = serverUrl.substring(0, serverUrl.lastIndexOf('/') + 1) + "workrow_faults";
        try (HikariDataSource dataSource = pool(url, user, password, 8)) {
            new WorkrowMigrations(dataSource, SqlIdentifier.of("schema", "public")).migrate();
            FaultSuite suite = new FaultSuite(new FaultDatabase(dataSource, url, user, password), Scale.FULL,
                    Path.of("target", "faults"));
            for (String scenario : args.length == 0 ? SCENARIOS : List.of(args)) {
                try {
                    System.out.println(json(suite.run(scenario)));
                } catch (ScenarioUnavailable e) {
                    System.out.println(json(Map.of("scenario", scenario, "skipped", e.getMessage())));
                }
            }
        }
    }

    private static HikariDataSource pool(String url, String user, String password, int size) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(url);
        pool.setUsername(user);
        pool.setPassword(password);
        pool.setMaximumPoolSize(size);
        return pool;
    }
}

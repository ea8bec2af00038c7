package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * What one claim of a full batch spends in the database, node by node: {@code jobs} ready jobs
 * (enqueued as the producer does), then {@code rounds} claims of {@code batch} through the store
 * the runtime uses, each planned and run as the runtime runs it, with PostgreSQL's auto_explain
 * printing the last claim's plan with its actual times and buffers (loaded for this session only;
 * it needs a superuser). Uses its own schema ({@code workrow_claim_plan}), dropped and recreated.
 *
 * <pre>
 * java -cp … io.workrow.queue.benchmark.ClaimPlan --jobs=100000 --batch=500 --rounds=10
 * </pre>
 */
public final class ClaimPlan {

    private ClaimPlan() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = DrainBenchmark.parse(args);
        int jobs = Integer.parseInt(options.getOrDefault("jobs", "100000"));
        int batch = Integer.parseInt(options.getOrDefault("batch", "500"));
        int rounds = Integer.parseInt(options.getOrDefault("rounds", "10"));
        SqlIdentifier schema = SqlIdentifier.of("--schema", "workrow_claim_plan");
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(options)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
            new WorkrowMigrations(dataSource, schema).migrate();
            JdbcJobQueue producer = new JdbcJobQueue(JobStore.of(dataSource, schema),
                    JacksonPayloadCodec.withDefaultMapper());
            for (int from = 0; from < jobs; from += 1000) {
                List<JobRequest> chunk = new ArrayList<>();
                for (int n = from; n < Math.min(jobs, from + 1000); n++) {
                    chunk.add(JobRequest.of("bench", Map.of("n", n)));
                }
                producer.enqueueAll(chunk);
            }
            jdbc.execute("VACUUM ANALYZE " + schema.quoted() + ".workrow_ready");
            jdbc.execute("VACUUM ANALYZE " + schema.quoted() + ".workrow_job_data");
            List<String> notices = new ArrayList<>();
            try (Connection connection = dataSource.getConnection(); Statement session = connection.createStatement()) {
                JobStore store = JobStore.of(new SingleConnectionDataSource(keepingNotices(connection, notices), true),
                        schema);
                for (int round = 1; round <= rounds; round++) {
                    if (round == rounds) {
                        session.execute("LOAD 'auto_explain'");
                        session.execute("SET auto_explain.log_min_duration = 0");
                        session.execute("SET auto_explain.log_analyze = on");
                        session.execute("SET auto_explain.log_buffers = on");
                        session.execute("SET auto_explain.log_level = notice");
                        notices.clear();
                    }
                    int claimed = store.claims().claim("bench", "claim-plan", batch, Duration.ofMinutes(5), false).size();
                    if (round == rounds) {
                        System.out.printf("claim %d of %d: %d jobs claimed%n", round, rounds, claimed);
                        notices.stream().filter(notice -> notice.contains("workrow_claim")).forEach(System.out::println);
                    }
                }
            }
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        }
    }

    /**
     * The connection, whose statements hand the notices they received (auto_explain's plans) to
     * {@code notices} as they close: the store's statements are closed before anyone could ask.
     */
    private static Connection keepingNotices(Connection connection, List<String> notices) {
        return (Connection) Proxy.newProxyInstance(ClaimPlan.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, arguments) -> {
                    Object result = invoke(method, connection, arguments);
                    if (!(result instanceof Statement statement)) {
                        return result;
                    }
                    Class<?> type = method.getReturnType();
                    return Proxy.newProxyInstance(ClaimPlan.class.getClassLoader(), new Class<?>[] {type},
                            (statementProxy, statementMethod, statementArguments) -> {
                                if (statementMethod.getName().equals("close")) {
                                    for (SQLWarning warning = statement.getWarnings(); warning != null;
                                            warning = warning.getNextWarning()) {
                                        notices.add(warning.getMessage());
                                    }
                                }
                                return invoke(statementMethod, statement, statementArguments);
                            });
                });
    }

    private static Object invoke(Method method, Object target, Object[] arguments) throws Throwable {
        try {
            return method.invoke(target, arguments);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}

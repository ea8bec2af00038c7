package io.workrow.queue.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import org.springframework.jdbc.core.JdbcTemplate;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Input an attacker or a careless caller controls: names and keys full of SQL metacharacters,
 * payloads that name classes to build, payloads over the size cap. Each test prints its figures
 * as one JSON line, like the fault scenarios.
 */
class HostileInputTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    /**
     * Strings that would change a statement's meaning if they were ever concatenated into SQL text,
     * each behind a marker of its own so that a leak is told from SQL's own {@code ?} or {@code $1}.
     */
    private static final List<String> FUZZ = IntStream.range(0, 16).mapToObj(i -> "fz" + i + "~" + List.of(
            "x'); DROP TABLE workrow_job; --", "a\"b\"c", "' OR '1'='1", "$1", "$$ || pg_sleep(1) || $$", "/* comment",
            "back\\slash", "semi;colon", "nul\u0001byte", "ünïcödé-キュー", "E'\\x41'", ":queue", "{job}", "%s%n", "?",
            "?::text").get(i)).toList();

    @BeforeEach
    void clean() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_queue_pause");
        Gadget.built.set(0);
    }

    @Test
    void fuzzedNamesAndKeysNeverReachSqlText() {
        List<String> sql = Collections.synchronizedList(new ArrayList<>());
        DataSource recording = recording(database.dataSource(), sql);
        JobStore store = JobStore.of(recording, SqlIdentifier.of("schema", "public"));
        JdbcJobQueue queue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        JdbcQueueAdmin admin = new JdbcQueueAdmin(store);
        int accepted = 0;
        int rejected = 0;
        for (String fuzz : FUZZ) {
            // Keys and payloads are data: stored exactly as given.
            long id = queue.enqueue(JobRequest.of("fuzz", Map.of("text", fuzz)).idempotencyKey(fuzz)
                    .partitionKey(fuzz).fairnessKey(fuzz));
            Map<String, Object> row = database.jdbc().queryForMap(
                    "SELECT idempotency_key, partition_key, fairness_key, payload->>'text' AS text FROM workrow_job WHERE id = ?", id);
            assertThat(row.values()).as(fuzz).containsOnly(fuzz);
            accepted++;
            // A queue name is checked before any statement (a clear error, nothing run), or bound.
            assertThatThrownBy(() -> queue.enqueue(JobRequest.of(fuzz, Map.of())))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is invalid");
            rejected++;
            for (Runnable named : List.<Runnable>of(() -> admin.pause(fuzz, fuzz), () -> admin.resume(fuzz),
                    () -> admin.cancel(fuzz, id), () -> admin.retryDead(fuzz, fuzz), () -> admin.runningJobs(fuzz, 10))) {
                try {
                    named.run();
                } catch (IllegalArgumentException invalidName) {
                    rejected++;
                }
            }
            assertThatThrownBy(() -> SqlIdentifier.of("schema", fuzz)).isInstanceOf(IllegalArgumentException.class);
            rejected++;
            // Operator inputs that are data go in as parameters.
            admin.deadJobs("fuzz", fuzz, 10);
            admin.setFairness("fuzz", fuzz, 2.0, null);
            assertThat(admin.clearFairness("fuzz", fuzz)).isTrue();
        }
        long leaked = FUZZ.stream().filter(fuzz -> sql.stream().anyMatch(text -> text.contains(fuzz))).count();
        // The recorder does see what is concatenated into a statement.
        new JdbcTemplate(recording).queryForObject("SELECT 'fz-probe'", String.class);
        assertThat(sql).anyMatch(text -> text.contains("fz-probe"));
        System.out.println(FaultSuite.json(Map.of("scenario", "sql-fuzz", "inputs", FUZZ.size(), "accepted_as_data",
                accepted, "rejected_names", rejected, "statements", sql.size() - 1, "sql_texts_containing_input", leaked)));
        assertThat(sql).as("statements recorded").isNotEmpty();
        assertThat(leaked).isZero();
    }

    @Test
    void payloadsNamingClassesBuildNothingButTheHandlersType() {
        JdbcJobQueue queue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        String gadget = Gadget.class.getName();
        List<Object> payloads = List.of(
                Map.of("@class", gadget, "command", "touch /tmp/workrow-gadget", "millis", 1),
                List.of(gadget, Map.of("command", "touch /tmp/workrow-gadget")),
                Map.of("millis", List.of(gadget, Map.of("command", "x"))),
                Map.of("@type", gadget, "@c", "." + Gadget.class.getSimpleName(), "millis", 1));
        List<Long> ids = new ArrayList<>();
        for (String target : List.of("gadget-typed", "gadget-object")) {
            for (Object payload : payloads) {
                ids.add(queue.enqueue(JobRequest.of(target, payload)));
            }
        }
        List<String> received = Collections.synchronizedList(new ArrayList<>());
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("gadget-typed", FaultWorker.Work.class, (work, job) -> received.add(work.getClass().getName()),
                        QueueOptions.defaults())
                .handler("gadget-object", Object.class, (any, job) -> received.add(any.getClass().getName()),
                        QueueOptions.defaults())
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE id = ANY (?) AND status IN ('completed', 'dead')", Long.class,
                    (Object) ids.toArray(Long[]::new)) == ids.size());
        } finally {
            runtime.stop();
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("scenario", "gadget-payloads");
        figures.put("payloads", ids.size());
        figures.put("gadgets_instantiated", Gadget.built.get());
        figures.put("completed", count("completed", ids));
        figures.put("dead_unreadable", count("dead", ids));
        figures.put("types_handed_to_handlers", String.join(" ", new java.util.TreeSet<>(received)));
        System.out.println(FaultSuite.json(figures));
        assertThat(Gadget.built.get()).isZero();
        assertThat(received).allMatch(type -> type.equals(FaultWorker.Work.class.getName()) || type.startsWith("java.util."));
    }

    @Test
    void payloadsOverTheCapAreRefusedAtEnqueueAndBigOnesUnderItRun() {
        JdbcJobQueue capped = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper(), queue -> 5, 4_096);
        assertThatThrownBy(() -> capped.enqueue(JobRequest.of("huge", Map.of("text", "x".repeat(5_000)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4096");
        assertThatThrownBy(() -> capped.enqueueAll(List.of(JobRequest.of("huge", Map.of("text", "small")),
                JobRequest.of("huge", Map.of("text", "x".repeat(5_000)))))).isInstanceOf(IllegalArgumentException.class);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Long.class))
                .as("nothing of a refused batch was written").isZero();
        // Just under the default cap of 1 MiB: stored, claimed, read and completed.
        JdbcJobQueue queue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        String big = "y".repeat(JdbcJobQueue.DEFAULT_MAX_PAYLOAD_BYTES - 64);
        long id = queue.enqueue(JobRequest.of("huge", Map.of("text", big)));
        AtomicInteger length = new AtomicInteger();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("huge", Map.class, (payload, job) -> length.set(((String) payload.get("text")).length()),
                        QueueOptions.defaults())
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> "completed".equals(database.jdbc().queryForObject(
                    "SELECT status FROM workrow_job WHERE id = ?", String.class, id)));
        } finally {
            runtime.stop();
        }
        System.out.println(FaultSuite.json(Map.of("scenario", "huge-payloads", "cap_bytes", 4_096,
                "over_cap_refused", 2, "near_default_cap_bytes", big.length(), "near_default_cap_completed", 1)));
        assertThat(length.get()).isEqualTo(big.length());
    }

    private static long count(String status, List<Long> ids) {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE id = ANY (?) AND status = ?",
                Long.class, ids.toArray(Long[]::new), status);
    }

    /** {@code dataSource} with every SQL text a connection is given recorded in {@code sql}. */
    private static DataSource recording(DataSource dataSource, List<String> sql) {
        return (DataSource) Proxy.newProxyInstance(HostileInputTests.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, dataSource, args);
                    return result instanceof Connection connection ? recording(connection, sql) : result;
                });
    }

    private static Connection recording(Connection connection, List<String> sql) {
        return (Connection) Proxy.newProxyInstance(HostileInputTests.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, connection, args);
                    if (args != null && args.length > 0 && args[0] instanceof String text
                            && (method.getName().startsWith("prepare") || method.getName().equals("nativeSQL"))) {
                        sql.add(text);
                    }
                    if (result instanceof java.sql.Statement statement && !(result instanceof java.sql.PreparedStatement)) {
                        return recording(statement, sql);
                    }
                    return result;
                });
    }

    private static java.sql.Statement recording(java.sql.Statement statement, List<String> sql) {
        return (java.sql.Statement) Proxy.newProxyInstance(HostileInputTests.class.getClassLoader(),
                new Class<?>[] {java.sql.Statement.class}, (proxy, method, args) -> {
                    if (args != null && args.length > 0 && args[0] instanceof String text) {
                        sql.add(text);
                    }
                    return invoke(method, statement, args);
                });
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** What a gadget chain would build: it counts every construction and setter call. */
    public static final class Gadget {

        static final AtomicInteger built = new AtomicInteger();

        public Gadget() {
            built.incrementAndGet();
        }

        public void setCommand(String command) {
            built.incrementAndGet();
        }
    }
}

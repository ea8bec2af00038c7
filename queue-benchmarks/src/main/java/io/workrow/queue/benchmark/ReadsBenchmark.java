package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How long each read the dashboard, the {@code workrow} endpoint, the gauges and health make takes
 * against a table with a long history: {@code retained} finished jobs (completed over the last
 * seven days, one in a hundred dead with one of three kinds of error, one in a thousand cancelled)
 * and {@code jobs} scheduled ahead,
 * plus a backlog of 10,000 pending and 100 running, in ten queues. The table is vacuumed and
 * analyzed after loading, as autovacuum would leave it; each read then runs {@code rounds} times
 * (after one warm-up) and its median and slowest are printed beside the target of 100 ms. The
 * history is written to the one-row-per-job table of version 12 and then moved by version 13, as
 * a user's is.
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
 *     -Dbenchmark.main=io.workrow.queue.benchmark.ReadsBenchmark -Dbenchmark.retained=10000000 \
 *     -Dbenchmark.jobs=1000000 -Dbenchmark.rounds=5
 * </pre>
 */
public final class ReadsBenchmark {

    private static final long TARGET_MILLIS = 100;
    private static final int QUEUES = 10;

    public static void main(String[] args) throws Exception {
        Map<String, String> given = DrainBenchmark.parse(args);
        long finished = Long.parseLong(given.getOrDefault("retained", "10000000"));
        long scheduled = Long.parseLong(given.getOrDefault("jobs", "1000000"));
        int rounds = Math.max(1, Integer.parseInt(given.getOrDefault("rounds", "5")));
        SqlIdentifier schema = SqlIdentifier.of("--schema", given.getOrDefault("schema", "workrow_reads"));
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(given)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            System.out.printf("Reads: finished=%,d scheduled=%,d rounds=%d PostgreSQL %s, shared_buffers %s,"
                    + " autovacuum %s%n", finished, scheduled, rounds, jdbc.queryForObject("SHOW server_version",
                    String.class), jdbc.queryForObject("SHOW shared_buffers", String.class),
                    jdbc.queryForObject("SHOW autovacuum", String.class));
            long loadStarted = System.nanoTime();
            load(jdbc, dataSource, schema, finished, scheduled);
            System.out.printf("loaded and vacuumed in %.0f s%n", (System.nanoTime() - loadStarted) / 1e9);
            // The way a user's history gets there: version 13 moves every job of the old table.
            long upgradeStarted = System.nanoTime();
            new WorkrowMigrations(dataSource, schema).migrate();
            for (String table : WriteOnceStore.JOB_TABLES) {
                jdbc.execute("VACUUM ANALYZE " + schema.quoted() + "." + table);
            }
            System.out.printf("moved to the write-once layout and vacuumed in %.0f s%n",
                    (System.nanoTime() - upgradeStarted) / 1e9);

            JobStore store = JobStore.of(dataSource, schema);
            QueueAdmin admin = new JdbcQueueAdmin(store);
            long someJob = jdbc.queryForObject("SELECT max(id) FROM " + schema.quoted() + ".workrow_job", Long.class);
            Map<String, Supplier<Object>> reads = new LinkedHashMap<>();
            reads.put("QueueAdmin.stats (dashboard overview, GET /actuator/workrow)", admin::stats);
            reads.put("QueueAdmin.runningJobs(100) (dashboard, endpoint)", () -> admin.runningJobs(null, 100));
            reads.put("QueueAdmin.deadErrorGroups(20) (dashboard)", () -> admin.deadErrorGroups(null, 20));
            reads.put("QueueAdmin.deadErrorGroups(one queue, 20)",
                    () -> admin.deadErrorGroups("queue-3", 20));
            reads.put("QueueAdmin.deadJobs(100) (endpoint)", () -> admin.deadJobs(null, null, 100));
            reads.put("QueueAdmin.finishedPerMinute(last hour) (dashboard chart)",
                    () -> admin.finishedPerMinute(Instant.now().minus(1, ChronoUnit.HOURS)));
            reads.put("QueueAdmin.job(id) (dashboard)", () -> admin.job(someJob));
            reads.put("QueueAdmin.pausedQueues, breakers, fairness, recurring", () -> List.of(admin.pausedQueues(),
                    admin.breakers(), admin.fairnessSettings(null, 100), admin.recurringJobs()));
            reads.put("JobStore.queueDepth (gauges, lag health)", store::queueDepth);
            reads.put("JobStore.tableCheck (health)", () -> {
                store.tableCheck();
                return null;
            });
            int over = 0;
            for (Map.Entry<String, Supplier<Object>> read : reads.entrySet()) {
                read.getValue().get(); // warm-up: plans and caches
                List<Double> millis = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    long started = System.nanoTime();
                    read.getValue().get();
                    millis.add((System.nanoTime() - started) / 1e6);
                }
                millis.sort(null);
                double median = millis.get(millis.size() / 2);
                double slowest = millis.get(millis.size() - 1);
                boolean met = slowest <= TARGET_MILLIS;
                over += met ? 0 : 1;
                System.out.printf("%-62s median %8.1f ms  slowest %8.1f ms  %s%n", read.getKey(), median, slowest,
                        met ? "ok" : "OVER " + TARGET_MILLIS + " ms");
            }
            System.out.printf("%d of %d reads over %d ms%n", over, reads.size(), TARGET_MILLIS);
        }
    }

    private static void load(JdbcTemplate jdbc, HikariDataSource dataSource, SqlIdentifier schema, long finished,
            long scheduled) {
        jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        new WorkrowMigrations(dataSource, schema).upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
        String job = schema.quoted() + ".workrow_job";
        String columns = "(queue, partition_bucket, payload, status, attempts, max_attempts, run_at, last_error,"
                + " started_at, finished_at, created_at)";
        // Finished history, spread over the last seven days; loaded in slices to keep each statement short.
        long slice = 1_000_000;
        for (long from = 1; from <= finished; from += slice) {
            long to = Math.min(finished, from + slice - 1);
            jdbc.update("INSERT INTO " + job + " " + columns + """
                     SELECT 'queue-' || ((i + i / 100) %% %d), 0, '{"order": 1}',
                            CASE WHEN i %% 1000 = 0 THEN 'cancelled' WHEN i %% 100 = 0 THEN 'dead' ELSE 'completed' END,
                            1, 5, done - interval '1 second',
                            CASE WHEN i %% 100 = 0 AND i %% 1000 <> 0
                                 THEN (ARRAY['java.net.SocketTimeoutException', 'java.io.IOException',
                                             'java.lang.IllegalStateException'])[1 + (i / 100) %% 3]
                                      || ': Read timed out ' || (i %% 7) END,
                            done - interval '1 second', done, done - interval '2 seconds'
                     FROM generate_series(?::bigint, ?::bigint) AS i,
                          LATERAL (SELECT now() - (i::float8 / ? * interval '7 days') AS done) AS t
                    """.formatted(QUEUES), from, to, finished);
        }
        jdbc.update("INSERT INTO " + job + " " + columns + """
                 SELECT 'queue-' || (i %% %d), 0, '{"order": 1}', 'scheduled', 0, 5,
                        now() + (i::float8 / ? * interval '7 days') + interval '1 minute', NULL, NULL, NULL, now()
                 FROM generate_series(1, ?::bigint) AS i
                """.formatted(QUEUES), scheduled, scheduled);
        jdbc.update("INSERT INTO " + job + " " + columns + """
                 SELECT 'queue-' || (i %% %d), 0, '{"order": 1}', 'pending', 0, 5, now() - interval '1 minute',
                        NULL, NULL, NULL, now()
                 FROM generate_series(1, 10000) AS i
                """.formatted(QUEUES));
        jdbc.update("UPDATE " + job + " SET status = 'running', attempts = 1, claimed_by = 'reads-benchmark',"
                + " lease_token = nextval('" + schema.quoted() + ".workrow_lease_token_seq'),"
                + " lease_expires_at = now() + interval '5 minutes', started_at = now()"
                + " WHERE id IN (SELECT id FROM " + job + " WHERE status = 'pending' LIMIT 100)");
        jdbc.execute("VACUUM ANALYZE " + job);
    }
}

package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.RowPerJobStore;
import io.workrow.queue.store.SqlIdentifier;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What each statement of a drain costs the database: a claim and an end per batch, driven by
 * {@code clients} threads with no runtime around them, in variants run in turns, each drain on a
 * freshly migrated schema with {@code jobs} pending jobs. The claims:
 *
 * <ul>
 *   <li>{@code workrow}: Workrow's JOB_CLAIM (the pause and breaker check, the unkeyed and keyed
 *       walks merged in claim order, a token per row, the columns a handler needs);</li>
 *   <li>{@code one walk}: only the unkeyed walk, the same update and the same columns back;</li>
 *   <li>{@code one walk, ids}: the same, returning only the id and token (no payload).</li>
 * </ul>
 *
 * The ends:
 *
 * <ul>
 *   <li>{@code update}: Workrow's fenced JOB_COMPLETE_MANY, the row kept in place as completed;</li>
 *   <li>{@code move}: the row deleted, fenced, and inserted as completed into a history table of
 *       the same columns with a primary key and a BRIN index on {@code finished_at} (finished jobs
 *       stay queryable, as a history table or partitions would keep them);</li>
 *   <li>{@code delete}: the row deleted, fenced, and kept nowhere (as graphile-worker ends a job).</li>
 * </ul>
 *
 * Each variant's rate beside Workrow's own (workrow + update) bounds what changing that statement
 * could buy the drain.
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
 *     -Dbenchmark.main=io.workrow.queue.benchmark.DrainStatementsBenchmark -Dbenchmark.jobs=200000
 * </pre>
 */
public final class DrainStatementsBenchmark {

    private static final String QUEUE = "bench";

    /** A claim and an end to drain with. */
    private record Variant(String claim, String end) {
        String name() {
            return claim + " + " + end;
        }
    }

    private static final List<Variant> VARIANTS = List.of(new Variant("workrow", "update"),
            new Variant("workrow", "move"), new Variant("workrow", "delete"), new Variant("one walk", "update"),
            new Variant("one walk, ids", "update"));

    public static void main(String[] args) throws Exception {
        Map<String, String> given = DrainBenchmark.parse(args);
        int jobs = Integer.parseInt(given.getOrDefault("jobs", "200000"));
        int clients = Integer.parseInt(given.getOrDefault("clients", "8"));
        int batch = Integer.parseInt(given.getOrDefault("batch", "500"));
        int rounds = Integer.parseInt(given.getOrDefault("rounds", "3"));
        SqlIdentifier schema = SqlIdentifier.of("--schema", given.getOrDefault("schema", "workrow_drain_statements"));
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(given)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            System.out.printf("Drain statements: jobs=%d clients=%d batch=%d rounds=%d cores=%d PostgreSQL %s%n", jobs,
                    clients, batch, rounds, Runtime.getRuntime().availableProcessors(),
                    jdbc.queryForObject("SHOW server_version", String.class));
            Map<Variant, List<Double>> rates = new LinkedHashMap<>();
            for (int round = 1; round <= rounds; round++) {
                for (Variant variant : VARIANTS) {
                    prepare(dataSource, jdbc, schema, jobs);
                    double rate = drain(dataSource, schema, variant, clients, batch);
                    long ended = jdbc.queryForObject(variant.end().equals("move")
                            ? "SELECT count(*) FROM " + schema.quoted() + ".workrow_job_history"
                            : "SELECT count(*) FROM " + schema.quoted() + ".workrow_job WHERE status = 'completed'",
                            Long.class);
                    long left = jdbc.queryForObject("SELECT count(*) FROM " + schema.quoted()
                            + ".workrow_job WHERE status <> 'completed'", Long.class);
                    if (left != 0 || (!variant.end().equals("delete") && ended != jobs)) {
                        throw new IllegalStateException(variant.name() + ": " + left + " jobs left, " + ended + " ended");
                    }
                    rates.computeIfAbsent(variant, name -> new ArrayList<>()).add(rate);
                    System.out.printf("round %d  %-24s %,9.0f jobs/s%n", round, variant.name(), rate);
                }
            }
            double workrow = median(rates.get(VARIANTS.get(0)));
            for (Variant variant : VARIANTS) {
                System.out.printf("median   %-24s %,9.0f jobs/s  %.2fx workrow + update  (%s)%n", variant.name(),
                        median(rates.get(variant)), median(rates.get(variant)) / workrow, rates.get(variant).stream()
                                .map(rate -> String.format("%,.0f", rate)).collect(Collectors.joining(", ")));
            }
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        }
    }

    /** A fresh schema with {@code jobs} pending jobs, vacuumed and analyzed, and an empty history table. */
    private static void prepare(HikariDataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema, int jobs) {
        String s = schema.quoted();
        jdbc.execute("DROP SCHEMA IF EXISTS " + s + " CASCADE");
        new WorkrowMigrations(dataSource, schema).upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
        jdbc.execute("CREATE TABLE " + s + ".workrow_job_history (LIKE " + s + ".workrow_job INCLUDING DEFAULTS)");
        jdbc.execute("ALTER TABLE " + s + ".workrow_job_history ADD PRIMARY KEY (id)");
        jdbc.execute("CREATE INDEX ON " + s + ".workrow_job_history USING brin (finished_at)");
        jdbc.update("INSERT INTO " + s + ".workrow_job (queue, partition_bucket, payload, status, run_at, max_attempts,"
                + " fairness_key) SELECT ?, 0, jsonb_build_object('n', n), 'pending', now(), 5, ''"
                + " FROM generate_series(1, ?) AS n", QUEUE, jobs);
        jdbc.execute("VACUUM ANALYZE " + s + ".workrow_job");
        jdbc.execute("VACUUM ANALYZE " + s + ".workrow_job_history");
    }

    /** Drains the queue with {@code clients} threads, each claiming a batch and ending it; returns jobs/s. */
    private static double drain(HikariDataSource dataSource, SqlIdentifier schema, Variant variant, int clients,
            int batch) throws Exception {
        RowPerJobStore store = new RowPerJobStore(dataSource, schema);
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        String end = variant.end().equals("update") ? null : endStatement(jdbc, schema, variant.end());
        String claim = variant.claim().equals("workrow") ? null
                : claimStatement(schema, variant.claim().equals("one walk, ids"));
        AtomicLong ended = new AtomicLong();
        AtomicInteger number = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        long started = System.nanoTime();
        List<Future<?>> loops = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            loops.add(threads.submit(() -> {
                String worker = "cost-" + number.incrementAndGet();
                Supplier<List<HeldJob>> claimBatch = claim == null
                        ? () -> store.claim(QUEUE, worker, batch, Duration.ofMinutes(5)).stream()
                                .map(job -> new HeldJob(job.id(), job.leaseToken())).toList()
                        : () -> claimed(jdbc, claim, worker, batch);
                List<HeldJob> held = claimBatch.get();
                while (!held.isEmpty()) {
                    ended.addAndGet(endAll(held, left -> end == null
                            ? store.completeMany(left).stream().map(HeldJob::id).collect(java.util.stream.Collectors.toSet())
                            : ended(jdbc, end, left)));
                    held = claimBatch.get();
                }
                return null;
            }));
        }
        for (Future<?> loop : loops) {
            loop.get();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        threads.shutdown();
        return ended.get() / seconds;
    }

    /**
     * Ends every job of the batch, {@code end} returning the ids it ended: like JOB_COMPLETE_MANY,
     * each statement skips rows another session has locked for a moment (a concurrent claim's scan
     * can), and the runtime's result writer writes those again, as this does.
     */
    private static int endAll(List<HeldJob> batch, Function<List<HeldJob>, Set<Long>> end) {
        List<HeldJob> left = batch;
        while (!left.isEmpty()) {
            Set<Long> done = end.apply(left);
            left = left.stream().filter(job -> !done.contains(job.id())).toList();
        }
        return batch.size();
    }

    /** Runs the claim statement {@code claim}; returns the jobs it claimed with their tokens. */
    private static List<HeldJob> claimed(JdbcTemplate jdbc, String claim, String worker, int batch) {
        return jdbc.query(claim, (row, n) -> new HeldJob(row.getLong("id"), row.getLong("lease_token")), QUEUE, batch,
                worker);
    }

    /**
     * Workrow's claim reduced to the unkeyed walk (no pause or breaker check, no keyed walk, no
     * merge), with the same update; returning what JOB_CLAIM returns, or only the ids and tokens.
     */
    private static String claimStatement(SqlIdentifier schema, boolean idsOnly) {
        String job = schema.quoted() + ".workrow_job";
        return "WITH due AS (SELECT job.id FROM " + job + " AS job"
                + " WHERE job.queue = ? AND job.status = 'pending' AND job.partition_key IS NULL"
                + " AND job.fairness_key = '' AND job.run_at <= now()"
                + " ORDER BY job.priority, job.run_at, job.id LIMIT ? FOR UPDATE SKIP LOCKED)"
                + " UPDATE " + job + " AS job SET status = 'running', claimed_by = ?,"
                + " lease_token = nextval('" + schema.quoted() + ".workrow_lease_token_seq'),"
                + " lease_expires_at = now() + interval '5 minutes', attempts = job.attempts + 1, ordered_key = NULL,"
                + " started_at = now(), updated_at = now() FROM due WHERE job.id = due.id"
                + (idsOnly ? " RETURNING job.id, job.lease_token"
                        : " RETURNING job.id, job.queue, job.partition_key, job.idempotency_key,"
                                + " job.payload::text AS payload, job.headers::text AS headers, job.attempts,"
                                + " job.max_attempts, job.step, job.lease_token, job.run_at");
    }

    /** Runs {@code end} on {@code held} (ids and tokens as two arrays); returns the ids it ended. */
    private static Set<Long> ended(JdbcTemplate jdbc, String end, List<HeldJob> held) {
        return jdbc.execute((ConnectionCallback<Set<Long>>) connection -> {
            try (PreparedStatement statement = connection.prepareStatement(end)) {
                statement.setArray(1, connection.createArrayOf("bigint", held.stream().map(HeldJob::id).toArray()));
                statement.setArray(2, connection.createArrayOf("bigint",
                        held.stream().map(HeldJob::leaseToken).toArray()));
                Set<Long> ids = new HashSet<>();
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        ids.add(rows.getLong(1));
                    }
                }
                return ids;
            }
        });
    }

    /**
     * The fenced statement that ends a batch in {@code variant} (ids and tokens as two arrays),
     * returning the ids it ended; it finds and locks the rows as JOB_COMPLETE_MANY does.
     */
    private static String endStatement(JdbcTemplate jdbc, SqlIdentifier schema, String variant) {
        String job = schema.quoted() + ".workrow_job";
        String gone = "WITH held AS (SELECT job.id FROM unnest(?::bigint[], ?::bigint[]) AS done(id, token)"
                + " JOIN " + job + " AS job ON job.id = done.id AND job.lease_token = done.token"
                + " FOR UPDATE OF job SKIP LOCKED),"
                + " gone AS (DELETE FROM " + job + " AS job USING held WHERE job.id = held.id RETURNING job.*)";
        if (variant.equals("delete")) {
            return gone + " SELECT id FROM gone";
        }
        // Every column as it was, but the ones a completion sets.
        Map<String, String> set = Map.of("status", "'completed'", "finished_at", "clock_timestamp()",
                "updated_at", "clock_timestamp()", "lease_expires_at", "NULL", "lease_token", "NULL");
        List<String> columns = jdbc.queryForList("SELECT column_name FROM information_schema.columns"
                + " WHERE table_schema = ? AND table_name = 'workrow_job' ORDER BY ordinal_position", String.class,
                schema.name());
        String values = columns.stream().map(column -> set.getOrDefault(column, "gone." + column))
                .collect(Collectors.joining(", "));
        return gone + " INSERT INTO " + job + "_history (" + String.join(", ", columns) + ") SELECT " + values
                + " FROM gone RETURNING id";
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }
}

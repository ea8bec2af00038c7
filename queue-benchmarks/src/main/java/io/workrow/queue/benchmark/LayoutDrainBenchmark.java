package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.NewJob;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The write-once layout through its store's own statements (no runtime around them), beside
 * graphile-worker's table and statements as the yardstick (the one-row-per-job layout this measured
 * too went with its store; its figures are in docs/performance.md): {@code clients} threads
 * enqueue {@code jobs} jobs in batches of
 * {@code batch}, then drain them, each claiming a batch and ending it in {@code ends} statements
 * (the result writer's flushes). Per job, the database server's CPU time (user and system of the
 * postmaster and every child, read from /proc, so it must run on the database's machine with read
 * access to its data directory's postmaster.pid) for:
 *
 * <ul>
 *   <li>{@code enqueue}: the enqueue and a VACUUM ANALYZE of what it wrote;</li>
 *   <li>{@code drain}: the claims and ends;</li>
 *   <li>{@code +vacuum}: the drain and a VACUUM of every table (autovacuum's work, done at once).</li>
 * </ul>
 *
 * With {@code --split=true} every client claims until nothing is left and only then ends what it
 * holds, so the claims' and the ends' costs are measured apart (the drain's rate then means
 * little). Each round runs every layout in turn on a fresh schema; the medians are printed last.
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
 *     -Dbenchmark.main=io.workrow.queue.benchmark.LayoutDrainBenchmark -Dbenchmark.jobs=200000
 * </pre>
 */
public final class LayoutDrainBenchmark {

    private static final String QUEUE = "bench";

    private static final Duration LEASE = Duration.ofMinutes(5);

    private enum Layout {
        GRAPHILE("graphile-worker's shape"), WRITE_ONCE("write-once (V13, WriteOnceStore)");

        final String label;

        Layout(String label) {
            this.label = label;
        }
    }

    /** Server CPU microseconds per job of each phase, and the drain's rate. */
    private record Figures(double enqueueMicros, double drainMicros, double vacuumedMicros, double jobsPerSecond,
            double claimMicros) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> given = DrainBenchmark.parse(args);
        int jobs = Integer.parseInt(given.getOrDefault("jobs", "200000"));
        int clients = Integer.parseInt(given.getOrDefault("clients", "8"));
        int batch = Integer.parseInt(given.getOrDefault("batch", "500"));
        int ends = Integer.parseInt(given.getOrDefault("ends", "5"));
        int rounds = Integer.parseInt(given.getOrDefault("rounds", "3"));
        boolean split = Boolean.parseBoolean(given.getOrDefault("split", "false"));
        SqlIdentifier schema = SqlIdentifier.of("--schema", given.getOrDefault("schema", "workrow_layout_drain"));
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(given)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            ServerCpu cpu = new ServerCpu(Path.of(jdbc.queryForObject("SHOW data_directory", String.class)));
            System.out.printf("Layout drain: jobs=%d clients=%d batch=%d ends=%d rounds=%d split=%b cores=%d"
                    + " PostgreSQL %s, shared_buffers %s, autovacuum %s%n", jobs, clients, batch, ends, rounds, split,
                    Runtime.getRuntime().availableProcessors(), jdbc.queryForObject("SHOW server_version", String.class),
                    jdbc.queryForObject("SHOW shared_buffers", String.class),
                    jdbc.queryForObject("SHOW autovacuum", String.class));
            Map<Layout, List<Figures>> figures = new LinkedHashMap<>();
            for (int round = 1; round <= rounds; round++) {
                for (Layout layout : Layout.values()) {
                    Figures result = run(layout, dataSource, jdbc, cpu, schema, jobs, clients, batch, ends, split);
                    figures.computeIfAbsent(layout, key -> new ArrayList<>()).add(result);
                    System.out.printf("round %d  %-34s enqueue %6.2f us  drain %6.2f us  +vacuum %6.2f us"
                            + "  %,8.0f jobs/s%s%n", round, layout.label, result.enqueueMicros(), result.drainMicros(),
                            result.vacuumedMicros(), result.jobsPerSecond(), split ? String.format(
                                    "  (claims %.2f us, ends %.2f us)", result.claimMicros(),
                                    result.drainMicros() - result.claimMicros()) : "");
                }
            }
            double graphile = median(figures.get(Layout.GRAPHILE), Figures::vacuumedMicros);
            for (Layout layout : Layout.values()) {
                List<Figures> runs = figures.get(layout);
                System.out.printf("median   %-34s enqueue %6.2f us  drain %6.2f us  +vacuum %6.2f us"
                        + " (%.2fx graphile-worker's shape)  %,8.0f jobs/s%s%n", layout.label,
                        median(runs, Figures::enqueueMicros), median(runs, Figures::drainMicros),
                        median(runs, Figures::vacuumedMicros), median(runs, Figures::vacuumedMicros) / graphile,
                        median(runs, Figures::jobsPerSecond),
                        split ? String.format("  (claims %.2f us, ends %.2f us)", median(runs, Figures::claimMicros),
                                median(runs, figure -> figure.drainMicros() - figure.claimMicros())) : "");
            }
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        }
    }

    private static Figures run(Layout layout, HikariDataSource dataSource, JdbcTemplate jdbc, ServerCpu cpu,
            SqlIdentifier schema, int jobs, int clients, int batch, int ends, boolean split) throws Exception {
        jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        Shape<?> shape = switch (layout) {
            case GRAPHILE -> new GraphileShape(jdbc, schema).create();
            case WRITE_ONCE -> {
                new WorkrowMigrations(dataSource, schema).migrate();
                yield new WriteOnceShape(new WriteOnceStore(dataSource, schema));
            }
        };
        jdbc.execute("CHECKPOINT");

        long start = cpu.ticks();
        parallel(clients, client -> {
            for (int first = client * batch; first < jobs; first += clients * batch) {
                shape.enqueue(IntStream.range(first, Math.min(jobs, first + batch))
                        .mapToObj(n -> new NewJob(QUEUE, null, 0, 0, null, "{\"n\": " + n + ", \"t\": 1763938000123.5}",
                                "{}", null, 0, 5))
                        .toList());
            }
            return 0L;
        });
        vacuum(jdbc, schema, true);
        double enqueue = cpu.micros(cpu.ticks() - start) / jobs;

        jdbc.execute("CHECKPOINT");
        start = cpu.ticks();
        long began = System.nanoTime();
        long ended;
        double claimMicros = Double.NaN;
        if (split) {
            List<List<List<?>>> held = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                held.add(new ArrayList<>());
            }
            parallel(clients, client -> {
                List<?> claimed;
                while (!(claimed = shape.claim("drain-" + client, batch)).isEmpty()) {
                    held.get(client).add(claimed);
                }
                return 0L;
            });
            claimMicros = cpu.micros(cpu.ticks() - start) / jobs;
            ended = parallel(clients, client -> {
                long count = 0;
                for (List<?> claimed : held.get(client)) {
                    count += endAll(shape, "drain-" + client, claimed, ends);
                }
                return count;
            });
        } else {
            ended = parallel(clients, client -> {
                long count = 0;
                List<?> claimed;
                while (!(claimed = shape.claim("drain-" + client, batch)).isEmpty()) {
                    count += endAll(shape, "drain-" + client, claimed, ends);
                }
                return count;
            });
        }
        double seconds = (System.nanoTime() - began) / 1e9;
        long drained = cpu.ticks() - start;
        vacuum(jdbc, schema, false);
        long vacuumed = cpu.ticks() - start;
        if (ended != jobs) {
            throw new IllegalStateException(layout.label + ": " + ended + " of " + jobs + " jobs ended");
        }
        return new Figures(enqueue, cpu.micros(drained) / jobs, cpu.micros(vacuumed) / jobs, jobs / seconds,
                claimMicros);
    }

    /** Ends one claimed batch in {@code ends} statements; returns how many jobs it ended. */
    @SuppressWarnings("unchecked")
    private static <T> long endAll(Shape<T> shape, String worker, List<?> claimed, int ends) {
        long count = 0;
        for (List<?> part : slices(claimed, ends)) {
            count += shape.end(worker, (List<T>) part);
        }
        return count;
    }

    /** One layout's enqueue, claim and end, as a drain calls them. */
    private interface Shape<T> {
        void enqueue(List<NewJob> jobs);

        /** Claims up to {@code batch} jobs; an empty list when none are left. */
        List<T> claim(String worker, int batch);

        /** Ends the jobs (trying again those whose rows were locked elsewhere); returns how many ended. */
        long end(String worker, List<T> jobs);
    }

    private record WriteOnceShape(WriteOnceStore store) implements Shape<ClaimedPosition> {

        public void enqueue(List<NewJob> jobs) {
            store.insertMany(jobs);
        }

        public List<ClaimedPosition> claim(String worker, int batch) {
            return store.claim(QUEUE, worker, batch, LEASE, false);
        }

        public long end(String worker, List<ClaimedPosition> jobs) {
            long count = 0;
            List<PositionEnd> left = jobs.stream().map(PositionEnd::completed).toList();
            while (!left.isEmpty()) {
                Map<PositionEnd, EndResult> results = store.endMany(left);
                count += results.values().stream().filter(EndResult::counted).count();
                left = left.stream().filter(end -> results.get(end).verdict() == EndResult.Verdict.BUSY).toList();
            }
            return count;
        }
    }

    /**
     * graphile-worker 0.17's table and statements, reduced to what a drain runs: an
     * {@code is_available} generated column under a partial index, a claim that sets
     * {@code locked_at} and {@code locked_by}, an end that deletes the row (no history kept).
     */
    private record GraphileShape(JdbcTemplate jdbc, SqlIdentifier schema) implements Shape<Long> {

        GraphileShape create() {
            String s = schema.quoted();
            jdbc.execute("CREATE SCHEMA " + s);
            jdbc.execute("CREATE TABLE " + s + ".jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                    + " job_queue_id integer, task_identifier text NOT NULL, payload json NOT NULL DEFAULT '{}',"
                    + " priority smallint NOT NULL DEFAULT 0, run_at timestamptz NOT NULL DEFAULT now(),"
                    + " attempts smallint NOT NULL DEFAULT 0, max_attempts smallint NOT NULL DEFAULT 25,"
                    + " last_error text, created_at timestamptz NOT NULL DEFAULT now(),"
                    + " updated_at timestamptz NOT NULL DEFAULT now(), key text UNIQUE, locked_at timestamptz,"
                    + " locked_by text, revision integer NOT NULL DEFAULT 0, flags jsonb,"
                    + " is_available boolean GENERATED ALWAYS AS ((locked_at IS NULL) AND (attempts < max_attempts))"
                    + " STORED NOT NULL)");
            jdbc.execute("CREATE INDEX jobs_main_index ON " + s + ".jobs (priority, run_at)"
                    + " INCLUDE (id, task_identifier, job_queue_id) WHERE is_available = true");
            return this;
        }

        public void enqueue(List<NewJob> jobs) {
            List<String> payloads = jobs.stream().map(NewJob::payloadJson).toList();
            jdbc.update(connection -> {
                var statement = connection.prepareStatement("INSERT INTO " + schema.quoted()
                        + ".jobs (task_identifier, payload) SELECT 'bench', payload::json FROM unnest(?::text[]) AS payload");
                statement.setArray(1, connection.createArrayOf("text", payloads.toArray()));
                return statement;
            });
        }

        public List<Long> claim(String worker, int batch) {
            String jobs = schema.quoted() + ".jobs";
            return jdbc.query("WITH picked AS (SELECT id FROM " + jobs + " WHERE is_available = true"
                    + " AND run_at <= now() AND task_identifier = 'bench' ORDER BY priority, run_at LIMIT ?"
                    + " FOR UPDATE SKIP LOCKED)"
                    + " UPDATE " + jobs + " AS jobs SET attempts = jobs.attempts + 1, locked_by = ?, locked_at = now()"
                    + " FROM picked WHERE jobs.id = picked.id RETURNING jobs.id, jobs.payload::text AS payload",
                    (rs, row) -> rs.getLong("id"), batch, worker);
        }

        public long end(String worker, List<Long> ids) {
            return jdbc.update(connection -> {
                var statement = connection.prepareStatement("DELETE FROM " + schema.quoted()
                        + ".jobs WHERE id = ANY (?) AND locked_by = ?");
                statement.setArray(1, connection.createArrayOf("int8", ids.toArray()));
                statement.setString(2, worker);
                return statement;
            });
        }
    }

    /** VACUUM (and ANALYZE) of every table of the schema. */
    private static void vacuum(JdbcTemplate jdbc, SqlIdentifier schema, boolean analyze) {
        List<String> tables = jdbc.queryForList("SELECT quote_ident(schemaname) || '.' || quote_ident(tablename)"
                + " FROM pg_tables WHERE schemaname = ?", String.class, schema.name());
        jdbc.execute((analyze ? "VACUUM ANALYZE " : "VACUUM ") + String.join(", ", tables));
    }

    private static <T> List<List<T>> slices(List<T> list, int count) {
        int size = Math.max(1, (list.size() + count - 1) / count);
        List<List<T>> slices = new ArrayList<>();
        for (int from = 0; from < list.size(); from += size) {
            slices.add(list.subList(from, Math.min(list.size(), from + size)));
        }
        return slices;
    }

    @FunctionalInterface
    private interface Client {
        long run(int client) throws Exception;
    }

    /** Runs {@code clients} copies of {@code client} at once; returns the sum of what they return. */
    private static long parallel(int clients, Client client) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int number = i;
                results.add(threads.submit(() -> client.run(number)));
            }
            long sum = 0;
            for (Future<Long> result : results) {
                sum += result.get();
            }
            return sum;
        } finally {
            threads.shutdown();
        }
    }

    private static double median(List<Figures> runs, java.util.function.ToDoubleFunction<Figures> figure) {
        List<Double> sorted = runs.stream().map(figure::applyAsDouble).sorted().toList();
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }

    /**
     * The CPU the database server has used, in clock ticks: the postmaster's own and its reaped
     * children's, and every live child's. Sampled before and after a phase, the difference counts
     * each backend once, whether it ended during the phase or not.
     */
    private static final class ServerCpu {

        private static final double TICKS_PER_SECOND = 100;

        private final long postmaster;

        ServerCpu(Path dataDirectory) throws IOException {
            this.postmaster = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
        }

        long ticks() throws IOException {
            long total = 0;
            String[] own = fields(Path.of("/proc", Long.toString(postmaster), "stat"));
            total += Long.parseLong(own[11]) + Long.parseLong(own[12]) + Long.parseLong(own[13])
                    + Long.parseLong(own[14]);
            try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
                for (Path process : processes.filter(path -> path.getFileName().toString().matches("\\d+"))
                        .collect(Collectors.toList())) {
                    try {
                        String[] stat = fields(process.resolve("stat"));
                        if (Long.parseLong(stat[1]) == postmaster) {
                            total += Long.parseLong(stat[11]) + Long.parseLong(stat[12]);
                        }
                    } catch (IOException | RuntimeException gone) {
                        // a process that ended between the listing and the read
                    }
                }
            }
            return total;
        }

        double micros(long ticks) {
            return ticks * 1e6 / TICKS_PER_SECOND;
        }

        /** The fields of a /proc stat line after the command name: [0] is the state, [1] the parent. */
        private static String[] fields(Path stat) throws IOException {
            String line = Files.readString(stat);
            return line.substring(line.lastIndexOf(')') + 2).trim().split(" ");
        }
    }
}

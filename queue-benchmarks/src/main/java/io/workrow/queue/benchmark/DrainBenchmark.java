package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Enqueues no-op jobs with {@code enqueueAll}, drains them with one runtime, then measures pick-up
 * latency under light load, and prints the figures with the worker JVM's CPU per 1,000 jobs drained.
 * Uses its own schema ({@code workrow_bench}), dropped and recreated at start, in the database
 * given by {@code --url}.
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests
 * </pre>
 */
public final class DrainBenchmark {

    private static final String QUEUE = "bench";
    private static final int ENQUEUE_CHUNK = 1000;

    record NoOp(int n) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        int jobs = Integer.parseInt(options.getOrDefault("jobs", "100000"));
        int concurrency = Integer.parseInt(options.getOrDefault("concurrency", "16"));
        // Unset, claims and prefetch are the engine's defaults: what a user who tunes nothing gets.
        int batchSize = Integer.parseInt(options.getOrDefault("batch-size",
                Integer.toString(QueueOptions.DEFAULT_BATCH_SIZE)));
        String prefetchOption = options.getOrDefault("prefetch", "adaptive");
        int prefetch = "adaptive".equals(prefetchOption) ? QueueOptions.ADAPTIVE_PREFETCH
                : Integer.parseInt(prefetchOption);
        SqlIdentifier schema = SqlIdentifier.of("--schema", options.getOrDefault("schema", "workrow_bench"));
        // --global-concurrency=N caps the queue across nodes (docs/patterns.md): each claim then locks
        // the queue's cap row and counts its open positions first.
        int globalConcurrency = Integer.parseInt(options.getOrDefault("global-concurrency", "0"));
        // --handler-ms=N gives each job N ms of work (a partner call), in place of none.
        long handlerNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(options.getOrDefault("handler-ms", "0")));

        try (HikariDataSource dataSource = dataSource(options)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
            WorkrowMigrations migrations = new WorkrowMigrations(dataSource, schema);
            migrations.migrate();
            JobStore store = JobStore.of(dataSource, schema);
            JdbcJobQueue jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());

            System.out.printf("Workrow drain benchmark: jobs=%d concurrency=%d batch-size=%d prefetch=%s"
                    + " global-concurrency=%s handler-ms=%d cores=%d java=%s%n", jobs, concurrency, batchSize,
                    prefetchOption, globalConcurrency == 0 ? "none" : Integer.toString(globalConcurrency),
                    TimeUnit.NANOSECONDS.toMillis(handlerNanos),
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
            System.out.printf("PostgreSQL: %s%n", jdbc.queryForObject("SHOW server_version", String.class));

            double enqueueRate = enqueue(jobQueue, jobs);
            System.out.printf("enqueue: %,d rows in chunks of %d: %,.0f rows/s%n", jobs, ENQUEUE_CHUNK, enqueueRate);
            for (String table : jdbc.queryForList("SELECT tablename FROM pg_tables WHERE schemaname = ?", String.class,
                    schema.name())) {
                jdbc.execute("VACUUM ANALYZE " + schema.quoted() + "." + SqlIdentifier.of("table", table).quoted());
            }

            // --light-jobs=0 leaves out the light-load phase (a profile of the drain alone).
            int lightJobs = Math.min(Integer.parseInt(options.getOrDefault("light-jobs", "1000")), jobs);
            long[] delays = new long[jobs + lightJobs];
            AtomicInteger handled = new AtomicInteger();
            CountDownLatch drained = new CountDownLatch(1);
            WorkerRuntime runtime = WorkerRuntime.builder(dataSource)
                    .schema(schema.name())
                    .handler(QUEUE, NoOp.class, (job, context) -> {
                        if (handlerNanos > 0) {
                            LockSupport.parkNanos(handlerNanos);
                        }
                        int index = handled.getAndIncrement();
                        delays[index] = Duration.between(context.runAt(), Instant.now()).toMillis();
                        if (index + 1 == jobs) {
                            drained.countDown();
                        }
                    }, QueueOptions.defaults().withConcurrency(concurrency).withBatchSize(batchSize)
                            .withPrefetch(prefetch).withGlobalConcurrency(globalConcurrency))
                    .build();
            com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            long cpuBefore = os.getProcessCpuTime();
            long started = System.nanoTime();
            runtime.start();
            drained.await();
            while (runtime.inFlightCount() > 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            double workerCpuMs = (os.getProcessCpuTime() - cpuBefore) / 1e6;
            int completed = jdbc.queryForObject("SELECT count(*) FROM " + schema.quoted()
                    + ".workrow_job WHERE status = 'completed'", Integer.class);
            System.out.printf("drain: %,d jobs completed in %.2f s: %,.0f jobs/s (handler runs: %,d);"
                    + " worker JVM CPU %.1f ms per 1,000 jobs%n", completed, seconds, completed / seconds,
                    handled.get(), workerCpuMs * 1000 / completed);
            printPercentiles("drain delay run_at -> handler start (backlog)", Arrays.copyOf(delays, jobs));

            long[] light = lightLoad(jobQueue, runtime, lightJobs, handled, delays);
            printPercentiles("light-load delay run_at -> handler start (" + lightJobs + " jobs at ~200/s)", light);
            runtime.stop();
        }
    }

    private static double enqueue(JdbcJobQueue jobQueue, int jobs) {
        long started = System.nanoTime();
        List<JobRequest> chunk = new ArrayList<>(ENQUEUE_CHUNK);
        for (int i = 0; i < jobs; i++) {
            chunk.add(JobRequest.of(QUEUE, new NoOp(i)));
            if (chunk.size() == ENQUEUE_CHUNK || i == jobs - 1) {
                jobQueue.enqueueAll(chunk);
                chunk.clear();
            }
        }
        return jobs / ((System.nanoTime() - started) / 1e9);
    }

    /** One job every 5 ms into an idle runtime: measures the notify-driven pick-up delay. */
    private static long[] lightLoad(JdbcJobQueue jobQueue, WorkerRuntime runtime, int count, AtomicInteger handled,
            long[] delays) throws InterruptedException {
        int base = handled.get();
        long next = System.nanoTime();
        for (int i = 0; i < count; i++) {
            jobQueue.enqueue(QUEUE, new NoOp(i));
            next += TimeUnit.MILLISECONDS.toNanos(5);
            LockSupport.parkNanos(next - System.nanoTime());
        }
        while (handled.get() < base + count) {
            Thread.sleep(10);
        }
        // The handler writes each delay at its run's index; the light-load ones follow the drain's.
        return Arrays.copyOfRange(delays, base, base + count);
    }

    private static void printPercentiles(String what, long[] millis) {
        if (millis.length == 0) {
            return;
        }
        long[] sorted = millis.clone();
        Arrays.sort(sorted);
        System.out.printf("%s: p50=%d ms p99=%d ms max=%d ms%n", what,
                sorted[(int) (sorted.length * 0.50)], sorted[Math.min(sorted.length - 1, (int) (sorted.length * 0.99))],
                sorted[sorted.length - 1]);
    }

    /** A pool of 8 on {@code --url}, {@code --user} and {@code --password} (default: local postgres). */
    static HikariDataSource dataSource(Map<String, String> options) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(options.getOrDefault("url", "jdbc:postgresql://localhost:5432/postgres"));
        config.setUsername(options.getOrDefault("user", "postgres"));
        config.setPassword(options.getOrDefault("password", ""));
        config.setMaximumPoolSize(8);
        return new HikariDataSource(config);
    }

    /**
     * The {@code --name=value} arguments of every benchmark here. {@code --layout} is refused: the
     * one-row-per-job layout it chose went with its store, and a run that took it would silently
     * measure the write-once layout.
     */
    public static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (String arg : args) {
            if (!arg.startsWith("--") || !arg.contains("=")) {
                throw new IllegalArgumentException("Arguments are --name=value, was " + arg);
            }
            int equals = arg.indexOf('=');
            options.put(arg.substring(2, equals), arg.substring(equals + 1));
        }
        if (options.containsKey("layout")) {
            throw new IllegalArgumentException("--layout is gone: Workrow runs only the write-once layout; the"
                    + " one-row-per-job figures in docs/performance.md name the commit that measured them");
        }
        return options;
    }
}

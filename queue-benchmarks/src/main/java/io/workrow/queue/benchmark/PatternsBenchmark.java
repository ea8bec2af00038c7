package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.worker.BreakerOptions;
import io.workrow.queue.worker.FairnessOptions;
import io.workrow.queue.worker.KeyOrdering;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What each pattern costs: drains the same number of no-op jobs through a plain queue and through
 * queues with a circuit breaker or ordered partitions, one after the other in one run, and prints
 * jobs/s for each beside the plain queue's. Each scenario gets a freshly migrated schema. Claims
 * take at most {@code --batch-size} jobs: the concurrency unless given, {@code default} for the
 * engine's default (with the adaptive line, a claim may then fill up to that).
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
 *     -Dbenchmark.main=io.workrow.queue.benchmark.PatternsBenchmark -Dbenchmark.jobs=20000
 * </pre>
 */
public final class PatternsBenchmark {

    private static final String QUEUE = "bench";

    record NoOp(int n) {
    }

    /** A queue set-up to measure: how its jobs are keyed and how it is worked. */
    private record Scenario(String name, int keys, UnaryOperator<QueueOptions> options) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> given = DrainBenchmark.parse(args);
        int jobs = Integer.parseInt(given.getOrDefault("jobs", "20000"));
        int concurrency = Integer.parseInt(given.getOrDefault("concurrency", "16"));
        int rounds = Integer.parseInt(given.getOrDefault("rounds", "2"));
        String batchOption = given.getOrDefault("batch-size", Integer.toString(concurrency));
        int batchSize = "default".equals(batchOption) ? QueueOptions.DEFAULT_BATCH_SIZE : Integer.parseInt(batchOption);
        SqlIdentifier schema = SqlIdentifier.of("--schema", given.getOrDefault("schema", "workrow_bench"));
        List<Scenario> scenarios = List.of(
                new Scenario("plain, no partition keys", 0, options -> options),
                new Scenario("plain, 1,000 partition keys", 1000, options -> options),
                new Scenario("breaker (closed), 1,000 keys", 1000,
                        options -> options.withBreaker(BreakerOptions.defaults())),
                new Scenario("ordered block, 1,000 keys", 1000, options -> options.withOrdering(KeyOrdering.BLOCK)),
                new Scenario("ordered skip, 1,000 keys", 1000, options -> options.withOrdering(KeyOrdering.SKIP)),
                new Scenario("ordered block, 64 keys", 64, options -> options.withOrdering(KeyOrdering.BLOCK)),
                new Scenario("weighted, 10 keys", 10, options -> options.withFairness(FairnessOptions.weighted())),
                new Scenario("weighted, 1,000 keys", 1000, options -> options.withFairness(FairnessOptions.weighted())),
                // Rates far above what the machine drains, so the figure is the claim's cost, not the limit.
                new Scenario("burst (unreached rate), 1,000 keys", 1000,
                        options -> options.withFairness(FairnessOptions.burst(1_000_000))),
                new Scenario("spaced (unreached rate), 1,000 keys", 1000,
                        options -> options.withFairness(FairnessOptions.spaced(1_000_000))));

        try (HikariDataSource dataSource = DrainBenchmark.dataSource(given)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            System.out.printf("Workrow patterns benchmark: jobs=%d concurrency=%d batch-size=%d rounds=%d cores=%d java=%s"
                    + " PostgreSQL %s%n", jobs, concurrency, batchSize, rounds, Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"), jdbc.queryForObject("SHOW server_version", String.class));
            Map<String, List<Double>> rates = new LinkedHashMap<>();
            for (int round = 1; round <= rounds; round++) {
                for (Scenario scenario : scenarios) {
                    double rate = drain(dataSource, jdbc, schema, scenario, jobs, concurrency, batchSize);
                    rates.computeIfAbsent(scenario.name(), name -> new ArrayList<>()).add(rate);
                    System.out.printf("round %d  %-32s %,8.0f jobs/s%n", round, scenario.name(), rate);
                }
            }
            double plain = best(rates.get(scenarios.get(0).name()));
            System.out.println("best of each, against the plain queue without keys:");
            rates.forEach((name, list) -> System.out.printf("  %-32s %,8.0f jobs/s  %5.2fx%n", name, best(list),
                    best(list) / plain));
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        }
    }

    private static double drain(HikariDataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema, Scenario scenario,
            int jobs, int concurrency, int batchSize) throws InterruptedException {
        jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        new WorkrowMigrations(dataSource, schema).migrate();
        JobStore store = JobStore.of(dataSource, schema);
        JdbcJobQueue jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        List<JobRequest> chunk = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            JobRequest request = JobRequest.of(QUEUE, new NoOp(i));
            chunk.add(scenario.keys() == 0 ? request : request.partitionKey("key-" + (i % scenario.keys())));
            if (chunk.size() == 1000 || i == jobs - 1) {
                jobQueue.enqueueAll(chunk);
                chunk.clear();
            }
        }
        jdbc.execute("VACUUM ANALYZE " + schema.quoted() + ".workrow_job");

        AtomicInteger handled = new AtomicInteger();
        CountDownLatch drained = new CountDownLatch(1);
        WorkerRuntime runtime = WorkerRuntime.builder(dataSource)
                .store(store)
                .handler(QUEUE, NoOp.class, (job, context) -> {
                    if (handled.incrementAndGet() == jobs) {
                        drained.countDown();
                    }
                }, scenario.options().apply(QueueOptions.defaults().withConcurrency(concurrency)
                        .withBatchSize(batchSize)))
                .build();
        long started = System.nanoTime();
        runtime.start();
        drained.await();
        String completed = "SELECT count(*) FROM " + schema.quoted() + ".workrow_job WHERE status = 'completed'";
        while (jdbc.queryForObject(completed, Integer.class) < jobs) {
            Thread.sleep(1);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        runtime.stop();
        return jobs / seconds;
    }

    private static double best(List<Double> rates) {
        return rates.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }
}

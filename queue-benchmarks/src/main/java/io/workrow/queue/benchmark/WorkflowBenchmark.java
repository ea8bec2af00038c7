package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.BatchReceipt;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What jobs that wait for others cost, with one runtime on the database given by {@code --url}
 * (its own schema, {@code workrow_bench}, dropped and made again per scenario):
 * <ul>
 * <li>a fan-in: {@code --fan-in} jobs (default 10,000) and one job {@code after()} all of them;
 * the time from the last one's completion ({@code finished_at}) to the dependent's start, the
 * enqueue of the dependent, and its {@code dependencyResults};</li>
 * <li>a batch of {@code --batch} no-op jobs (default 100,000) with both callbacks, against the
 * same number enqueued plainly with {@code enqueueAll} in chunks of 5,000: enqueue rate, drain
 * rate, and how often each callback ran.</li>
 * </ul>
 * Each scenario runs {@code --rounds} times (default 3).
 *
 * <pre>
 * java -cp … io.workrow.queue.benchmark.WorkflowBenchmark --url=jdbc:postgresql://127.0.0.1:5432/postgres
 * </pre>
 */
public final class WorkflowBenchmark {

    private static final int CHUNK = 5_000;

    record NoOp(int n) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = DrainBenchmark.parse(args);
        int fanIn = Integer.parseInt(options.getOrDefault("fan-in", "10000"));
        int batch = Integer.parseInt(options.getOrDefault("batch", "100000"));
        int rounds = Integer.parseInt(options.getOrDefault("rounds", "3"));
        SqlIdentifier schema = SqlIdentifier.of("--schema", options.getOrDefault("schema", "workrow_bench"));
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(options)) {
            // Two queues' pollers, the listener, the writer, the keeper and maintenance: the pool
            // must hold them all, or the listener waits for a connection and pick-ups wait a poll.
            dataSource.setMaximumPoolSize(16);
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            System.out.printf("Workrow workflow benchmark: fan-in=%d batch=%d rounds=%d cores=%d java=%s PostgreSQL %s%n",
                    fanIn, batch, rounds, Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"), jdbc.queryForObject("SHOW server_version", String.class));
            for (int round = 1; round <= rounds; round++) {
                fanIn(dataSource, jdbc, schema, fanIn, round);
            }
            for (int round = 1; round <= rounds; round++) {
                batchAgainstPlain(dataSource, jdbc, schema, batch, round);
            }
        }
    }

    private static JobStore freshSchema(HikariDataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema) {
        jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        new WorkrowMigrations(dataSource, schema).migrate();
        return JobStore.of(dataSource, schema);
    }

    private static void fanIn(HikariDataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema, int parts,
            int round) throws InterruptedException {
        JobStore store = freshSchema(dataSource, jdbc, schema);
        JdbcJobQueue jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        List<Long> ids = jobQueue.enqueueAll(IntStream.range(0, parts).mapToObj(n -> JobRequest.of("part",
                new NoOp(n))).toList());
        long started = System.nanoTime();
        long join = jobQueue.enqueue(JobRequest.of("join", new NoOp(-1))
                .after(ids.stream().mapToLong(Long::longValue).toArray()));
        double enqueueMs = (System.nanoTime() - started) / 1e6;
        CountDownLatch joined = new CountDownLatch(1);
        long[] resultsMs = {0};
        int[] results = {0};
        WorkerRuntime runtime = WorkerRuntime.builder(dataSource).store(store)
                .function("part", NoOp.class, (noOp, job) -> noOp.n(), QueueOptions.defaults())
                .handler("join", NoOp.class, (noOp, job) -> {
                    long read = System.nanoTime();
                    results[0] = job.dependencyResults(Integer.class).size();
                    resultsMs[0] = (System.nanoTime() - read) / 1_000_000;
                    joined.countDown();
                }, QueueOptions.defaults())
                .build();
        runtime.start();
        boolean done = joined.await(5, TimeUnit.MINUTES);
        runtime.stop();
        Map<String, Object> times = jdbc.queryForMap("""
                SELECT extract(epoch FROM (SELECT started_at FROM %1$s.workrow_job WHERE id = ?)
                                        - (SELECT max(finished_at) FROM %1$s.workrow_job WHERE queue = 'part')) * 1000
                           AS release_ms,
                       (SELECT count(*) FROM %1$s.workrow_job WHERE queue = 'part' AND status = 'completed') AS parts
                """.formatted(schema.quoted()), join);
        System.out.printf("fan-in round %d: %,d jobs -> 1: enqueue of the dependent %.0f ms; last completion ->"
                + " dependent started %.1f ms; dependencyResults %,d results in %d ms; parts completed %s%s%n", round,
                parts, enqueueMs, ((Number) times.get("release_ms")).doubleValue(), results[0], resultsMs[0],
                times.get("parts"), done ? "" : " (the dependent did not run within 5 minutes)");
    }

    private static void batchAgainstPlain(HikariDataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema,
            int jobs, int round) throws InterruptedException {
        for (boolean asBatch : new boolean[] {false, true}) {
            JobStore store = freshSchema(dataSource, jdbc, schema);
            JdbcJobQueue jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
            List<JobRequest> requests = IntStream.range(0, jobs).mapToObj(n -> JobRequest.of("member",
                    new NoOp(n))).toList();
            long started = System.nanoTime();
            if (asBatch) {
                BatchReceipt receipt = jobQueue.batch().addAll(requests)
                        .onSuccess(JobRequest.of("callback", new NoOp(1)))
                        .onFinish(JobRequest.of("callback", new NoOp(2))).enqueue();
                if (receipt.jobIds().size() != jobs) {
                    throw new IllegalStateException("the batch holds " + receipt.jobIds().size() + " jobs");
                }
            } else {
                for (int from = 0; from < jobs; from += CHUNK) {
                    jobQueue.enqueueAll(requests.subList(from, Math.min(jobs, from + CHUNK)));
                }
            }
            double enqueueSeconds = (System.nanoTime() - started) / 1e9;
            jdbc.execute("VACUUM ANALYZE");
            AtomicInteger handled = new AtomicInteger();
            AtomicInteger callbacks = new AtomicInteger();
            CountDownLatch drained = new CountDownLatch(1);
            CountDownLatch calledBack = new CountDownLatch(asBatch ? 2 : 0);
            WorkerRuntime runtime = WorkerRuntime.builder(dataSource).store(store)
                    .handler("member", NoOp.class, (noOp, job) -> {
                        if (handled.incrementAndGet() == jobs) {
                            drained.countDown();
                        }
                    }, QueueOptions.defaults())
                    .handler("callback", NoOp.class, (noOp, job) -> {
                        callbacks.incrementAndGet();
                        calledBack.countDown();
                    }, QueueOptions.defaults())
                    .build();
            started = System.nanoTime();
            runtime.start();
            drained.await(10, TimeUnit.MINUTES);
            while (runtime.inFlightCount() > 0) {
                Thread.sleep(1);
            }
            double drainSeconds = (System.nanoTime() - started) / 1e9;
            calledBack.await(1, TimeUnit.MINUTES);
            Thread.sleep(500);
            runtime.stop();
            System.out.printf("%s round %d: %,d jobs enqueued at %,.0f jobs/s, drained at %,.0f jobs/s%s%n",
                    asBatch ? "batch" : "plain", round, jobs, jobs / enqueueSeconds, jobs / drainSeconds,
                    asBatch ? "; callbacks ran " + callbacks.get() + " times (2 expected)" : "");
        }
    }
}

package io.workrow.queue.benchmark.compare;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Workrow: enqueues through {@link JdbcJobQueue} in this JVM, drains with
 * {@link WorkrowWorkerApplication} JVMs started on the starter.
 */
final class WorkrowContender implements Contender {

    static final SqlIdentifier SCHEMA = SqlIdentifier.of("schema", "workrow_compare");
    static final String QUEUE = "bench";

    private final BenchDatabase database;
    private final int batchSize;
    /** The queue's prefetch, or {@code null} to leave it unset: sized from the handlers' throughput. */
    private final Integer prefetch;
    /** Whether the schema takes the write-once layout (V13), which the workers' starter then runs on. */
    private final boolean writeOnce;
    private JobStore store;
    private JdbcJobQueue jobQueue;

    WorkrowContender(BenchDatabase database, int batchSize, Integer prefetch, boolean writeOnce) {
        this.database = database;
        this.batchSize = batchSize;
        this.prefetch = prefetch;
        this.writeOnce = writeOnce;
    }

    boolean writeOnce() {
        return writeOnce;
    }

    @Override
    public String name() {
        return "workrow";
    }

    /** The claim statements of the schema's layout, for the raw-SQL limit. */
    ClaimStore claims() {
        return store.claims();
    }

    @Override
    public void prepare() {
        WorkrowMigrations migrations = new WorkrowMigrations(database.dataSource(), SCHEMA);
        (writeOnce ? migrations : migrations.upTo(WorkrowMigrations.ROW_PER_JOB_VERSION)).migrate();
        store = JobStore.of(database.dataSource(), SCHEMA);
        jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
    }

    @Override
    public void empty() {
        database.jdbc().execute(writeOnce
                ? "TRUNCATE " + Stream.concat(WriteOnceStore.JOB_TABLES.stream(), Stream.of("workrow_lease_holder"))
                        .map(table -> SCHEMA.quoted() + "." + table).collect(Collectors.joining(", "))
                : "TRUNCATE " + SCHEMA.quoted() + ".workrow_job");
    }

    @Override
    public double enqueueSingle(int jobs, int producers) {
        return Load.concurrently(jobs, producers, n -> jobQueue.enqueue(QUEUE, new Tick(n, WorkerProtocol.nowMillis())));
    }

    @Override
    public double enqueueBulk(int jobs, int chunk) {
        return Load.inChunks(jobs, chunk, (first, last) -> {
            double t = WorkerProtocol.nowMillis();
            List<JobRequest> requests = new ArrayList<>(last - first);
            for (int n = first; n < last; n++) {
                requests.add(JobRequest.of(QUEUE, new Tick(n, t)));
            }
            jobQueue.enqueueAll(requests);
        });
    }

    @Override
    public List<Integer> drainProcesses() {
        return List.of(1, 2);
    }

    @Override
    public List<WorkerProcess> startDrainWorkers(Handler handler, int processes) {
        // No-op: 32 handlers and claims of up to 100 per JVM. Five-millisecond handlers: 64 in all.
        int concurrency = handler == Handler.NO_OP ? 32 : 64 / processes;
        List<WorkerProcess> workers = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            workers.add(start("workrow-" + handler.argument + "-" + (i + 1) + "of" + processes, handler,
                    concurrency, true, Duration.ofSeconds(1)));
        }
        return workers;
    }

    @Override
    public List<Pickup> pickups() {
        return List.of(Pickup.LISTEN_NOTIFY, Pickup.POLL);
    }

    @Override
    public WorkerProcess startIdleWorker(Pickup pickup) {
        boolean listen = pickup == Pickup.LISTEN_NOTIFY;
        return start("workrow-idle-" + pickup, Handler.NO_OP, 32, listen,
                listen ? Duration.ofSeconds(1) : Duration.ofMillis(100));
    }

    @Override
    public void trickle(int jobs, Duration interval) {
        Load.paced(jobs, interval, n -> jobQueue.enqueue(QUEUE, new Tick(n, WorkerProtocol.nowMillis())));
    }

    /** Adds {@code rows} completed jobs in one statement, as a queue's retained history. */
    void retainFinished(long rows) {
        database.jdbc().update("INSERT INTO " + SCHEMA.quoted() + ".workrow_job (queue, partition_bucket, payload, "
                + "status, run_at, max_attempts, attempts, claimed_by, started_at, finished_at, updated_at) "
                + "SELECT ?, 0, jsonb_build_object('n', n, 't', 0), 'completed', now() - interval '1 hour', 5, 1, "
                + "'history', now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour' "
                + "FROM generate_series(1, ?) AS n", QUEUE, rows);
    }

    long finishedRows() {
        return database.count("SELECT count(*) FROM " + SCHEMA.quoted() + ".workrow_job WHERE status = 'completed'");
    }

    @Override
    public long unfinished() {
        if (writeOnce) {
            // The waiting homes and the claims' open positions: never the history.
            String prefix = SCHEMA.quoted() + ".workrow_";
            return database.count("SELECT (SELECT count(*) FROM " + prefix + "ready)"
                    + " + (SELECT count(*) FROM " + prefix + "scheduled)"
                    + " + (SELECT coalesce(sum(length(replace((settled | dropped)::text, '1', ''))), 0)"
                    + " FROM " + prefix + "claim)");
        }
        // One count per partial index (pending jobs without and with keys, running jobs), so that
        // none reads the retained history.
        String job = SCHEMA.quoted() + ".workrow_job";
        return database.count("SELECT (SELECT count(*) FROM " + job + " WHERE status = 'pending'"
                + " AND partition_key IS NULL AND fairness_key = '')"
                + " + (SELECT count(*) FROM " + job + " WHERE status = 'pending'"
                + " AND (partition_key IS NOT NULL OR fairness_key <> ''))"
                + " + (SELECT count(*) FROM " + job + " WHERE status = 'running')");
    }

    @Override
    public String configuration() {
        return "Spring Boot application on the starter, one JVM per process (-Xmx256m, Hikari pool 16); no-op: "
                + "concurrency 32, batch " + batchSize + ", prefetch " + (prefetch == null ? "adaptive" : prefetch) + " per JVM; 5 ms: concurrency 64 in all; LISTEN/NOTIFY with "
                + "1 s safety poll, poll-only every 100 ms; "
                + (writeOnce ? "write-once layout: a claim row per batch, finished jobs kept as outcome rows"
                        : "finished jobs kept as rows with status completed");
    }

    private WorkerProcess start(String name, Handler handler, int concurrency, boolean listen, Duration pollInterval) {
        String queue = "--workrow.queues." + QUEUE;
        List<String> arguments = new java.util.ArrayList<>(List.of(
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN",
                "--spring.datasource.url=" + database.jdbcUrl(),
                "--spring.datasource.username=" + database.user(),
                "--spring.datasource.hikari.maximum-pool-size=16",
                "--workrow.schema=" + SCHEMA.name(),
                "--workrow.listen-notify=" + listen,
                "--workrow.poll-interval=" + pollInterval.toMillis() + "ms",
                queue + ".concurrency=" + concurrency,
                queue + ".batch-size=" + batchSize,
                "--bench.handler=" + handler.argument));
        if (prefetch != null) {
            arguments.add(queue + ".prefetch=" + prefetch);
        }
        return WorkerProcess.start(name, database.javaCommand(WorkrowWorkerApplication.class.getName(), arguments),
                java.util.Map.of(), database.logDirectory());
    }
}

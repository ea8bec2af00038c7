package io.workrow.queue.benchmark.compare;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import io.workrow.queue.worker.QueueOptions;
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
    /** Ids past a retained history that its range also covers: the drains measured beside it. */
    private static final long HISTORY_HEADROOM = 50_000_000;

    /** The queue's batch size, or {@code null} to leave it unset: the engine's default. */
    private final Integer batchSize;
    /** The queue's prefetch, or {@code null} to leave it unset: sized from the handlers' throughput. */
    private final Integer prefetch;
    private JobStore store;
    private JdbcJobQueue jobQueue;

    WorkrowContender(BenchDatabase database, Integer batchSize, Integer prefetch) {
        this.database = database;
        this.batchSize = batchSize;
        this.prefetch = prefetch;
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
        new WorkrowMigrations(database.dataSource(), SCHEMA).migrate();
        store = JobStore.of(database.dataSource(), SCHEMA);
        jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
    }

    @Override
    public void empty() {
        database.jdbc().execute("TRUNCATE " + Stream.concat(WriteOnceStore.JOB_TABLES.stream(),
                Stream.of("workrow_lease_holder")).map(table -> SCHEMA.quoted() + "." + table)
                .collect(Collectors.joining(", ")));
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

    /**
     * Adds {@code rows} completed jobs in one statement, as a queue's retained history: their data
     * and one completed outcome each, finished an hour ago. Their ids, and the drains' after them,
     * get an id range of job data of their own first, as an upgraded history has: in the default
     * partition the partition keeper would move them during the drains.
     */
    void retainFinished(long rows) {
        String prefix = SCHEMA.quoted() + ".workrow_";
        long high = database.jdbc().queryForObject("SELECT max((regexp_match(pg_get_expr(child.relpartbound,"
                + " child.oid), 'TO \\(''(-?\\d+)''\\)'))[1]::bigint) FROM pg_inherits"
                + " JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid"
                + " WHERE pg_inherits.inhparent = '" + prefix + "job_data'::regclass", Long.class);
        long next = Math.max(high, database.jdbc().queryForObject("SELECT last_value + 1 FROM " + prefix
                + "job_id_seq", Long.class));
        database.jdbc().queryForObject("SELECT setval('" + prefix + "job_id_seq', ?, false)", Long.class, next);
        database.jdbc().execute("CREATE TABLE " + prefix + "job_data_" + next + " PARTITION OF " + prefix
                + "job_data FOR VALUES FROM (" + next + ") TO (" + (next + rows + HISTORY_HEADROOM) + ")");
        database.jdbc().update("WITH jobs AS (INSERT INTO " + prefix + "job_data (id, queue, partition_bucket, payload,"
                + " max_attempts, created_at) SELECT nextval('" + prefix + "job_id_seq'), ?, 0,"
                + " jsonb_build_object('n', n, 't', 0), 5, now() - interval '1 hour' FROM generate_series(1, ?) AS n"
                + " RETURNING id, queue)"
                + " INSERT INTO " + prefix + "outcome (job_id, attempt, queue, status, worker, run_at, started_at,"
                + " finished_at) SELECT id, 1, queue, 'completed', 'history', now() - interval '1 hour',"
                + " now() - interval '1 hour', now() - interval '1 hour' FROM jobs", QUEUE, rows);
    }

    @Override
    public long unfinished() {
        // The waiting homes and the claims' open positions: never the history.
        String prefix = SCHEMA.quoted() + ".workrow_";
        return database.count("SELECT (SELECT count(*) FROM " + prefix + "ready)"
                + " + (SELECT count(*) FROM " + prefix + "scheduled)"
                + " + (SELECT coalesce(sum(length(replace((settled | dropped)::text, '1', ''))), 0)"
                + " FROM " + prefix + "claim)");
    }

    @Override
    public String configuration() {
        return "Spring Boot application on the starter, one JVM per process (-Xmx256m, Hikari pool 16); no-op: "
                + "concurrency 32, batch " + (batchSize == null ? "unset (" + QueueOptions.DEFAULT_BATCH_SIZE + ")" : batchSize)
                + ", prefetch " + (prefetch == null ? "adaptive" : prefetch) + " per JVM; 5 ms: concurrency 64 in all; LISTEN/NOTIFY with "
                + "1 s safety poll, poll-only every 100 ms; "
                + "write-once layout: a claim row per batch, finished jobs kept as outcome rows";
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
                "--bench.handler=" + handler.argument));
        if (batchSize != null) {
            arguments.add(queue + ".batch-size=" + batchSize);
        }
        if (prefetch != null) {
            arguments.add(queue + ".prefetch=" + prefetch);
        }
        return WorkerProcess.start(name, database.javaCommand(WorkrowWorkerApplication.class.getName(), arguments),
                java.util.Map.of(), database.logDirectory());
    }
}

package io.workrow.queue.faults;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What every scenario drives: the worker JVMs it starts (each with the suite's settings, every one
 * destroyed after the scenario), the producer, the ledgers' checker and the database they share.
 */
final class FaultFleet {

    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration START = Duration.ofMinutes(2);
    static final Duration DRAIN = Duration.ofMinutes(5);
    /** Handlers per worker; each holds a connection for its transaction and one more for the invocation ledger. */
    static final int CONCURRENCY = 8;
    /** The application name worker JVMs connect with, to find their backends in pg_stat_activity. */
    static final String WORKER_APPLICATION = "fault-worker:";

    private final FaultDatabase database;
    private final FaultSuite.Scale scale;
    private final Path logDirectory;
    private final JdbcTemplate jdbc;
    private final JobStore store;
    private final JdbcJobQueue queue;
    private final FaultChecker checker;
    private final List<WorkerJvm> started = new ArrayList<>();

    FaultFleet(FaultDatabase database, FaultSuite.Scale scale, Path logDirectory) {
        this.database = database;
        this.scale = scale;
        this.logDirectory = logDirectory;
        this.jdbc = database.jdbc();
        this.store = JobStore.of(database.dataSource(), SqlIdentifier.of("schema", "public"));
        this.queue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        this.checker = new FaultChecker(jdbc);
    }

    FaultDatabase database() {
        return database;
    }

    FaultSuite.Scale scale() {
        return scale;
    }

    JdbcTemplate jdbc() {
        return jdbc;
    }

    /** Workrow's statements on the suite's own pool, as another node would run them. */
    JobStore store() {
        return store;
    }

    /** The producer. */
    JdbcJobQueue queue() {
        return queue;
    }

    FaultChecker checker() {
        return checker;
    }

    /** Every worker JVM started in this scenario, restarts included. */
    List<WorkerJvm> started() {
        return started;
    }

    /** Destroys every worker JVM the scenario started and forgets them. */
    void destroyAll() {
        started.forEach(WorkerJvm::destroy);
        started.clear();
    }

    /**
     * Enqueues {@link FaultSuite.Scale#pickupJobs()} jobs one at a time, one every 20 ms, waits until they are
     * done and returns the delay from each enqueue to its handler's start ({@code prefix_p50_ms},
     * {@code _p99_ms}, {@code _max_ms}); the ids are added to {@code into}.
     */
    Map<String, Object> pickup(String prefix, List<Long> into) {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < scale.pickupJobs(); i++) {
            ids.add(queue.enqueue(JobRequest.of(FaultWorker.QUEUE, new FaultWorker.Work(0))));
            Waits.sleep(20);
        }
        awaitCompleted(ids);
        into.addAll(ids);
        Map<String, Object> delays = jdbc.queryForMap("""
                SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY millis)) AS p50,
                       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY millis)) AS p99,
                       round(max(millis)) AS max
                FROM (SELECT extract(epoch FROM min(invocation.invoked_at) - job.created_at) * 1000 AS millis
                      FROM fault_invocation AS invocation
                      JOIN workrow_job AS job ON job.id = invocation.job_id
                      WHERE job.id = ANY (?)
                      GROUP BY job.id, job.created_at) AS per_job
                """, (Object) ids.toArray(Long[]::new));
        Map<String, Object> figures = new LinkedHashMap<>();
        delays.forEach((name, value) -> figures.put(prefix + "_" + name + "_ms", ((Number) value).longValue()));
        return figures;
    }

    static String withParameter(String jdbcUrl, String parameter) {
        return jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + parameter;
    }

    /** Starts one worker per name with {@link #start(String, int, String...)} and waits until each has started. */
    List<WorkerJvm> startWorkers(int prefetch, List<String> names, String... overrides) {
        List<WorkerJvm> workers = new ArrayList<>();
        for (String name : names) {
            workers.add(start(name, prefetch, overrides));
        }
        workers.forEach(worker -> worker.awaitStarted(START));
        return workers;
    }

    /** SIGTERM to each, waiting for it to exit. */
    void terminate(List<WorkerJvm> workers) {
        workers.forEach(worker -> worker.terminate(Duration.ofSeconds(60)));
    }

    /**
     * Starts a worker with the suite's settings, {@code prefetch} jobs claimed ahead, and
     * {@code overrides} ("property=value") on top.
     */
    WorkerJvm start(String name, int prefetch, String... overrides) {
        return start(name, prefetch, Map.of(), overrides);
    }

    /** As {@link #start(String, int, String...)}, with {@code environment} for the worker's process. */
    WorkerJvm start(String name, int prefetch, Map<String, String> environment, String... overrides) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("spring.main.banner-mode", "off");
        settings.put("logging.level.root", "WARN");
        settings.put("logging.level.io.workrow", "INFO");
        // Each JVM's sessions carry its name: the lease ledger tells which worker ended a lease.
        settings.put("spring.datasource.url", withParameter(database.jdbcUrl(), "ApplicationName=" + WORKER_APPLICATION + name));
        settings.put("spring.datasource.username", database.user());
        settings.put("spring.datasource.password", database.password());
        settings.put("spring.datasource.hikari.maximum-pool-size", Integer.toString(2 * CONCURRENCY + 8));
        settings.put("workrow.lease", LEASE.toMillis() + "ms");
        settings.put("workrow.poll-interval", "200ms");
        settings.put("workrow.sweeper.interval", "500ms");
        // The jobs are shared between a transactional queue and a plain one, each with half the
        // handlers and half the prefetch.
        for (String queueName : List.of(FaultWorker.QUEUE, FaultWorker.PLAIN_QUEUE)) {
            String queueSettings = "workrow.queues." + queueName;
            settings.put(queueSettings + ".concurrency", Integer.toString(CONCURRENCY / 2));
            settings.put(queueSettings + ".batch-size", "100");
            settings.put(queueSettings + ".prefetch", Integer.toString(prefetch / 2));
            // A crash is not the job's fault: expiries do not spend attempts, and many are allowed.
            settings.put(queueSettings + ".max-lease-expiries", "50");
            settings.put(queueSettings + ".backoff.initial", "100ms");
            settings.put(queueSettings + ".backoff.max", "100ms");
        }
        for (String override : overrides) {
            int equals = override.indexOf('=');
            settings.put(override.substring(0, equals), override.substring(equals + 1));
        }
        WorkerJvm worker = WorkerJvm.start(name, logDirectory, settings, environment);
        started.add(worker);
        return worker;
    }

    /** Enqueues {@code jobs} jobs of {@code millis}, alternately to the transactional queue and the plain one. */
    List<Long> enqueue(int jobs, long millis) {
        List<Long> ids = new ArrayList<>();
        List<JobRequest> chunk = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            chunk.add(JobRequest.of(i % 2 == 0 ? FaultWorker.QUEUE : FaultWorker.PLAIN_QUEUE, new FaultWorker.Work(millis)));
            if (chunk.size() == 500 || i == jobs - 1) {
                ids.addAll(queue.enqueueAll(chunk));
                chunk.clear();
            }
        }
        return ids;
    }

    /** Enqueues {@code jobs} jobs of {@code millis} to {@code queueName}. */
    List<Long> enqueueTo(String queueName, int jobs, long millis) {
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            requests.add(JobRequest.of(queueName, new FaultWorker.Work(millis)));
        }
        return queue.enqueueAll(requests);
    }

    long pending() {
        return jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'pending'", Long.class);
    }

    /** Jobs running under {@code worker}'s leases (claimed_by is host:pid:suffix). */
    long held(WorkerJvm worker) {
        return jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'running' AND claimed_by LIKE ?",
                Long.class, "%:" + worker.pid() + ":%");
    }

    void awaitCompleted(List<Long> ids) {
        Long[] enqueued = ids.toArray(Long[]::new);
        Waits.until(DRAIN, ids.size() + " jobs to complete", () -> jdbc.queryForObject("""
                SELECT count(*) FROM unnest(?::bigint[]) AS enqueued(id)
                JOIN workrow_job AS job ON job.id = enqueued.id AND job.status = 'completed'
                """, Long.class, (Object) enqueued) == ids.size());
    }
}

package io.workrow.queue.benchmark.compare;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A peer queue in Node.js, driven through its script in {@code peers/} (installed with its
 * pinned packages into a temporary directory by {@code scripts/compare.sh}).
 */
final class NodeContender implements Contender {

    private final String name;
    private final BenchDatabase database;
    private final Path peers;
    private final String emptySql;
    private final String unfinishedSql;
    private final List<Integer> drainProcesses;
    private final BiFunction<Handler, Integer, List<String>> drainArguments;
    private final Function<Pickup, List<String>> idleArguments;
    private final String configuration;

    private NodeContender(String name, BenchDatabase database, Path peers, String emptySql, String unfinishedSql,
            List<Integer> drainProcesses, BiFunction<Handler, Integer, List<String>> drainArguments,
            Function<Pickup, List<String>> idleArguments, String configuration) {
        this.name = name;
        this.database = database;
        this.peers = peers;
        this.emptySql = emptySql;
        this.unfinishedSql = unfinishedSql;
        this.drainProcesses = drainProcesses;
        this.drainArguments = drainArguments;
        this.idleArguments = idleArguments;
        this.configuration = configuration;
    }

    /**
     * graphile-worker: 2 processes of 24 with a local queue of {@code localQueue} (500 in the
     * published runs) and batched completions (no-op); 2 × 32 (5 ms).
     */
    static NodeContender graphileWorker(BenchDatabase database, Path peers, int localQueue) {
        return new NodeContender("graphile-worker", database, peers,
                "TRUNCATE graphile_worker._private_jobs CASCADE",
                "SELECT count(*) FROM graphile_worker._private_jobs",
                List.of(2),
                (handler, processes) -> List.of("work", handler == Handler.NO_OP ? "24" : "32",
                        Integer.toString(localQueue), handler.argument),
                pickup -> List.of("work", "24", "1", "noop"),
                "0.17.3; no-op: 2 processes x concurrency 24, local queue " + localQueue
                        + ", completeJobBatchDelay 0; 5 ms: 2 x 32; idle: LISTEN/NOTIFY, no local queue; finished "
                        + "jobs are deleted");
    }

    /** pg-boss: 4 work loops fetching 5,000 at a time, running them all at once (no-op) or 16 at a time (5 ms); it polls. */
    static NodeContender pgBoss(BenchDatabase database, Path peers) {
        return new NodeContender("pg-boss", database, peers,
                "TRUNCATE pgboss.job",
                "SELECT count(*) FROM pgboss.job WHERE state < 'completed'",
                List.of(1),
                (handler, processes) -> List.of("work", "4", "5000", handler == Handler.NO_OP ? "5000" : "16", "0.5",
                        handler.argument),
                pickup -> List.of("work", "1", "100", "100", "0.5", "noop"),
                "10.4.2; one process, 4 work() loops fetching up to 5,000 jobs; no-op: a batch's jobs run at once; "
                        + "5 ms: 16 at a time per loop; polls every 0.5 s (its minimum), no LISTEN/NOTIFY; finished "
                        + "jobs kept");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void prepare() {
        WorkerProcess setup = WorkerProcess.start(name + "-setup", command(List.of("setup")),
                database.nodeEnvironment(), database.logDirectory());
        setup.awaitExitOk();
    }

    @Override
    public void empty() {
        database.jdbc().execute(emptySql);
    }

    @Override
    public double enqueueSingle(int jobs, int producers) {
        return WorkerProcess.runForRate(name + "-enqueue-single",
                command(List.of("enqueue-single", Integer.toString(jobs), Integer.toString(producers))),
                database.nodeEnvironment(), database.logDirectory());
    }

    @Override
    public double enqueueBulk(int jobs, int chunk) {
        return WorkerProcess.runForRate(name + "-enqueue-bulk",
                command(List.of("enqueue-bulk", Integer.toString(jobs), Integer.toString(chunk))),
                database.nodeEnvironment(), database.logDirectory());
    }

    @Override
    public List<Integer> drainProcesses() {
        return drainProcesses;
    }

    @Override
    public List<WorkerProcess> startDrainWorkers(Handler handler, int processes) {
        List<WorkerProcess> workers = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            workers.add(WorkerProcess.start(name + "-" + handler.argument + "-" + (i + 1) + "of" + processes,
                    command(drainArguments.apply(handler, processes)), database.nodeEnvironment(),
                    database.logDirectory()));
        }
        return workers;
    }

    @Override
    public List<Pickup> pickups() {
        return List.of(name.equals("pg-boss") ? Pickup.POLL : Pickup.LISTEN_NOTIFY);
    }

    @Override
    public WorkerProcess startIdleWorker(Pickup pickup) {
        return WorkerProcess.start(name + "-idle-" + pickup, command(idleArguments.apply(pickup)),
                database.nodeEnvironment(), database.logDirectory());
    }

    @Override
    public void trickle(int jobs, Duration interval) {
        WorkerProcess.start(name + "-trickle", command(List.of("trickle", Integer.toString(jobs),
                Long.toString(interval.toMillis()))), database.nodeEnvironment(), database.logDirectory()).awaitExitOk();
    }

    @Override
    public long unfinished() {
        return database.count(unfinishedSql);
    }

    @Override
    public String configuration() {
        return configuration;
    }

    private List<String> command(List<String> arguments) {
        List<String> command = new ArrayList<>(List.of("node", peers.resolve(name + ".mjs").toString()));
        command.addAll(arguments);
        return command;
    }
}

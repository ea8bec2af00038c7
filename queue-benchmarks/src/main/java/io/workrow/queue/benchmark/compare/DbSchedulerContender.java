package io.workrow.queue.benchmark.compare;

import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.ExecutionContext;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.VoidExecutionHandler;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * db-scheduler: one-time task instances scheduled from this JVM with its {@link SchedulerClient},
 * executed by {@link DbSchedulerWorker} JVMs.
 */
final class DbSchedulerContender implements Contender {

    private static final String TABLE = """
            CREATE TABLE IF NOT EXISTS scheduled_tasks (
                task_name text NOT NULL,
                task_instance text NOT NULL,
                task_data bytea,
                execution_time timestamptz NOT NULL,
                picked boolean NOT NULL,
                picked_by text,
                last_success timestamptz,
                last_failure timestamptz,
                consecutive_failures int,
                last_heartbeat timestamptz,
                version bigint NOT NULL,
                priority smallint,
                PRIMARY KEY (task_name, task_instance)
            );
            CREATE INDEX IF NOT EXISTS execution_time_idx ON scheduled_tasks (execution_time);
            CREATE INDEX IF NOT EXISTS last_heartbeat_idx ON scheduled_tasks (last_heartbeat);
            CREATE INDEX IF NOT EXISTS priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time ASC)
            """;

    private final BenchDatabase database;
    private SchedulerClient client;
    private final OneTimeTask<String> task = task((instance, context) -> {
    });

    DbSchedulerContender(BenchDatabase database) {
        this.database = database;
    }

    /** The task {@code bench}; its data is {@code "<n> <enqueued at, epoch ms>"}. */
    static OneTimeTask<String> task(VoidExecutionHandler<String> handler) {
        return Tasks.oneTime("bench", String.class).execute(handler);
    }

    static double enqueuedAt(String data) {
        return Double.parseDouble(data.substring(data.indexOf(' ') + 1));
    }

    private TaskInstance<String> instance(int n, double t) {
        return task.instance(Integer.toString(n), n + " " + t);
    }

    @Override
    public String name() {
        return "db-scheduler";
    }

    @Override
    public void prepare() {
        database.jdbc().execute(TABLE);
        client = SchedulerClient.Builder.create(database.dataSource(), task).build();
    }

    @Override
    public void empty() {
        database.jdbc().execute("TRUNCATE scheduled_tasks");
    }

    @Override
    public double enqueueSingle(int jobs, int producers) {
        return Load.concurrently(jobs, producers, n -> client.schedule(instance(n, WorkerProtocol.nowMillis()), Instant.now()));
    }

    @Override
    public double enqueueBulk(int jobs, int chunk) {
        return Load.inChunks(jobs, chunk, (first, last) -> {
            double t = WorkerProtocol.nowMillis();
            List<TaskInstance<?>> instances = new ArrayList<>(last - first);
            for (int n = first; n < last; n++) {
                instances.add(instance(n, t));
            }
            client.scheduleBatch(instances, Instant.now());
        });
    }

    @Override
    public List<Integer> drainProcesses() {
        return List.of(1);
    }

    @Override
    public List<WorkerProcess> startDrainWorkers(Handler handler, int processes) {
        List<WorkerProcess> workers = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            workers.add(start("db-scheduler-" + handler.argument + "-" + (i + 1) + "of" + processes,
                    handler == Handler.NO_OP ? 20 : 64, handler));
        }
        return workers;
    }

    @Override
    public List<Pickup> pickups() {
        return List.of(Pickup.POLL);
    }

    @Override
    public WorkerProcess startIdleWorker(Pickup pickup) {
        return start("db-scheduler-idle", 20, Handler.NO_OP);
    }

    @Override
    public void trickle(int jobs, Duration interval) {
        Load.paced(jobs, interval, n -> client.schedule(instance(n, WorkerProtocol.nowMillis()), Instant.now()));
    }

    @Override
    public long unfinished() {
        return database.count("SELECT count(*) FROM scheduled_tasks");
    }

    @Override
    public String configuration() {
        return "16.12.0; one JVM (-Xmx256m), lock-and-fetch polling every 100 ms; no-op: 20 threads; 5 ms: 64 "
                + "threads; finished one-time tasks are deleted";
    }

    private WorkerProcess start(String name, int threads, Handler handler) {
        return WorkerProcess.start(name, database.javaCommand(DbSchedulerWorker.class.getName(), List.of(
                database.jdbcUrl(), database.user(), Integer.toString(threads), handler.argument, "100")),
                java.util.Map.of(), database.logDirectory());
    }
}

package io.workrow.queue.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import io.workrow.queue.worker.RetryBackoff;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Workers as users deploy them: {@link WorkerOnlyApplication} in JVM processes of their own, stopped
 * with SIGTERM, frozen with SIGSTOP, two of them on one database.
 */
@DisabledOnOs(OS.WINDOWS)
class WorkerProcessTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final List<Process> processes = new ArrayList<>();

    @BeforeAll
    static void createRunsTable() {
        database.jdbc().execute("CREATE TABLE process_runs (job_id bigint NOT NULL, worker bigint NOT NULL)");
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM process_runs");
    }

    @AfterEach
    void killLeftovers() {
        for (Process process : processes) {
            process.destroyForcibly();
        }
    }

    @Test
    void aWorkerOnlyServiceStaysUpAndStopsGracefullyOnSigterm() throws Exception {
        List<Long> quick = List.of(enqueue(100), enqueue(100), enqueue(100));
        List<Long> slow = List.of(enqueue(600_000), enqueue(600_000));
        Process worker = start("sigterm", "--workrow.shutdown-timeout=2s");

        await().atMost(Duration.ofSeconds(60)).until(() -> status(quick).values().stream().allMatch("completed"::equals)
                && status(slow).values().stream().allMatch("running"::equals));
        assertThat(worker.waitFor(3, TimeUnit.SECONDS)).as("still running with its main thread long gone").isFalse();

        worker.destroy(); // SIGTERM
        assertThat(worker.waitFor(30, TimeUnit.SECONDS)).as("stopped within the shutdown timeouts").isTrue();
        assertThat(worker.exitValue()).isEqualTo(143); // 128 + SIGTERM, after the shutdown hook ran
        for (long id : slow) {
            Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
            assertThat(row.get("status")).isEqualTo("pending");
            assertThat(row.get("claimed_by")).isNull();
            assertThat((String) row.get("last_error")).startsWith("interrupted by shutdown");
        }
        assertThat(log("sigterm")).contains("Workrow stopped");
    }

    @Test
    void aFrozenWorkerLosesItsLeasesOnTimeAndItsLateResultIsNotWritten() throws Exception {
        List<Long> jobs = List.of(enqueue(20_000), enqueue(20_000));
        Process worker = start("sigstop", "--workrow.lease=2s", "--workrow.sweeper.interval=1h");
        await().atMost(Duration.ofSeconds(60)).until(() -> status(jobs).values().stream().allMatch("running"::equals));
        signal(worker, "STOP");
        try {
            // Frozen: nothing renews. Each lease runs out within its 2 s.
            await().atMost(Duration.ofSeconds(6)).until(() -> database.jdbc().queryForObject(
                    "SELECT bool_and(lease_expires_at < now()) FROM workrow_job", Boolean.class));
            StaleLeaseSweeper sweeper = new StaleLeaseSweeper(database.store(), 100, QueueMetrics.NOOP, Map.of(),
                    new RetryBackoff(Duration.ofHours(1), 2.0, Duration.ofHours(1), 0.0));
            assertThat(sweeper.runOnce()).isEqualTo(2);
        } finally {
            signal(worker, "CONT");
        }
        // Thawed, its next renewal finds the jobs gone: handlers interrupted, nothing recorded.
        await().atMost(Duration.ofSeconds(15)).until(() -> log("sigstop").contains("lost its lease"));
        worker.destroy();
        assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
        for (long id : jobs) {
            Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
            assertThat(row.get("status")).as("recovered, waiting out the hour's backoff").isEqualTo("scheduled");
            assertThat((String) row.get("last_error")).startsWith("lease expired while held by");
        }
    }

    @Test
    void twoWorkerJvmsOnOneDatabaseRunEveryJobExactlyOnce() throws Exception {
        Process first = start("pair-1");
        Process second = start("pair-2");
        // Both must be claiming before the jobs arrive: a JVM that starts late on a busy machine
        // could otherwise find the other one done.
        await().atMost(Duration.ofSeconds(60)).until(() -> log("pair-1").contains("Workrow started")
                && log("pair-2").contains("Workrow started"));
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            ids.add(enqueue(2));
        }
        await().atMost(Duration.ofSeconds(90)).until(() -> database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == ids.size());
        first.destroy();
        second.destroy();
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(second.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM process_runs", Integer.class))
                .isEqualTo(ids.size());
        assertThat(database.jdbc().queryForObject("SELECT count(DISTINCT job_id) FROM process_runs", Integer.class))
                .isEqualTo(ids.size());
        assertThat(database.jdbc().queryForObject("SELECT count(DISTINCT worker) FROM process_runs", Integer.class))
                .as("both JVMs took part").isEqualTo(2);
    }

    @Test
    void aJobThatKillsEveryWorkerIsParkedAfterMaxLeaseExpiriesWithItsAttemptsUnspent() throws Exception {
        long id = jobQueue.enqueue("process-crash", new WorkerOnlyApplication.Work(0));
        String[] crashQueue = {"--workrow.queues.process-crash.max-lease-expiries=2",
                "--workrow.queues.process-crash.lease=1s", "--workrow.queues.process-crash.backoff.initial=100ms",
                "--workrow.queues.process-crash.backoff.max=100ms", "--workrow.sweeper.interval=500ms"};
        // Each worker JVM that claims the job dies; the next one's sweeper finds the expired lease.
        for (int crash = 1; crash <= 2; crash++) {
            Process worker = start("crash-" + crash, crashQueue);
            assertThat(worker.waitFor(60, TimeUnit.SECONDS)).as("worker %d killed by the job", crash).isTrue();
            assertThat(worker.exitValue()).isEqualTo(137);
        }
        Process survivor = start("crash-3", crashQueue);
        await().atMost(Duration.ofSeconds(60)).until(() -> "dead".equals(status(List.of(id)).get(id)));
        assertThat(survivor.isAlive()).as("the job was parked before it could kill a third worker").isTrue();
        Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
        assertThat((String) row.get("last_error")).startsWith("lease expired 2 times; last held by ");
        assertThat(row.get("lease_expiries")).isEqualTo(2);
        assertThat(row.get("attempts")).as("crashes are not handler failures").isEqualTo(0);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM process_runs", Integer.class)).isEqualTo(2);
        survivor.destroy();
        assertThat(survivor.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    private long enqueue(long millis) {
        return jobQueue.enqueue("process-work", new WorkerOnlyApplication.Work(millis));
    }

    private Map<Long, String> status(List<Long> ids) {
        Map<Long, String> statuses = new java.util.HashMap<>();
        for (long id : ids) {
            statuses.put(id, database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?",
                    String.class, id));
        }
        return statuses;
    }

    private Process start(String name, String... extraArgs) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                WorkerOnlyApplication.class.getName(),
                "--spring.datasource.url=" + database.jdbcUrl(),
                "--spring.datasource.username=" + database.server().user(),
                "--spring.datasource.password=" + (database.server().password() == null ? ""
                        : database.server().password()),
                "--workrow.poll-interval=200ms",
                "--logging.level.io.workrow=INFO"));
        command.addAll(List.of(extraArgs));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(logFile(name).toFile()).start();
        processes.add(process);
        return process;
    }

    private static Path logFile(String name) {
        return new File("target/worker-process-" + name + ".log").toPath();
    }

    private static String log(String name) throws IOException {
        return Files.readString(logFile(name));
    }

    private static void signal(Process process, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}

package io.workrow.queue.faults;

import static io.workrow.queue.faults.FaultFleet.START;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Everything at once for minutes, with a kill -9 every 15 s: claims, sweeps, bulk retries and
 * batch finalizes must never deadlock.
 */
final class SoakScenario {

    private final FaultFleet fleet;
    private final JdbcTemplate jdbc;
    private final JdbcJobQueue queue;
    private final FaultChecker checker;
    private final FaultSuite.Scale scale;
    private final JobStore store;

    SoakScenario(FaultFleet fleet) {
        this.fleet = fleet;
        this.jdbc = fleet.jdbc();
        this.queue = fleet.queue();
        this.checker = fleet.checker();
        this.scale = fleet.scale();
        this.store = fleet.store();
    }

    /** This class's scenarios, by the name their figures carry. */
    Map<String, Supplier<Map<String, Object>>> byName() {
        Map<String, Supplier<Map<String, Object>>> scenarios = new LinkedHashMap<>();
        scenarios.put("soak", this::soak);
        return scenarios;
    }

    /**
     * Everything at once for {@link FaultSuite.Scale#soakSeconds()}: three workers claiming and completing in
     * batches, a producer enqueueing in bulk, jobs failing into dead that an operator retries in bulk
     * every second, and a kill -9 every 15 s whose expired leases the sweepers recover. PostgreSQL's
     * own count of deadlocks in the database must not move.
     */
    private Map<String, Object> soak() {
        String[] settings = {"workrow.queues." + FaultWorker.FLAKY_QUEUE + ".concurrency=4"};
        List<WorkerJvm> workers = fleet.startWorkers(92, List.of("soak-1", "soak-2", "soak-3"), settings);
        long deadlocksBefore = deadlocks();
        JdbcQueueAdmin admin = new JdbcQueueAdmin(store);
        List<Long> ids = new ArrayList<>();
        long retried = 0;
        int kills = 0;
        long end = System.nanoTime() + Duration.ofSeconds(scale.soakSeconds()).toNanos();
        long nextKill = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (System.nanoTime() < end) {
            if (fleet.pending() < 3_000) {
                ids.addAll(fleet.enqueue(1_000, 5));
                List<JobRequest> failing = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    // One attempt: each fails into dead, and every bulk retry starts it at attempt 1 again.
                    failing.add(JobRequest.of(FaultWorker.FLAKY_QUEUE, new FaultWorker.Work(0)).maxAttempts(1));
                }
                queue.enqueueAll(failing);
            }
            retried += admin.retryDead(FaultWorker.FLAKY_QUEUE, "");
            if (System.nanoTime() > nextKill) {
                int index = kills % workers.size();
                workers.get(index).kill9();
                kills++;
                WorkerJvm replacement = fleet.start("soak-" + (index + 1) + "-restart-" + kills, 92, settings);
                replacement.awaitStarted(START);
                workers.set(index, replacement);
                nextKill = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            }
            Waits.sleep(1_000);
        }
        fleet.awaitCompleted(ids);
        fleet.terminate(workers);
        Map<String, Object> figures = checker.check(ids);
        figures.put("soak_seconds", scale.soakSeconds());
        figures.put("kills", kills);
        figures.put("dead_jobs_retried_in_bulk", retried);
        figures.put("deadlocks", deadlocks() - deadlocksBefore);
        figures.put("deadlocks_in_worker_logs", fleet.started().stream().mapToLong(worker -> worker.logLines("deadlock")).sum());
        return figures;
    }

    private long deadlocks() {
        return jdbc.queryForObject("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()", Long.class);
    }
}

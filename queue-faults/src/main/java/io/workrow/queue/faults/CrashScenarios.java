package io.workrow.queue.faults;

import static io.workrow.queue.faults.FaultFleet.LEASE;
import static io.workrow.queue.faults.FaultFleet.START;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.springframework.jdbc.core.JdbcTemplate;

/** Worker JVMs that die, freeze, stop, or run longer than their lease while they hold jobs. */
final class CrashScenarios {

    private final FaultFleet fleet;
    private final JdbcTemplate jdbc;
    private final FaultChecker checker;
    private final FaultSuite.Scale scale;

    CrashScenarios(FaultFleet fleet) {
        this.fleet = fleet;
        this.jdbc = fleet.jdbc();
        this.checker = fleet.checker();
        this.scale = fleet.scale();
    }

    /** This class's scenarios, by the name their figures carry. */
    Map<String, Supplier<Map<String, Object>>> byName() {
        Map<String, Supplier<Map<String, Object>>> scenarios = new LinkedHashMap<>();
        scenarios.put("kill-9", this::killWorkers);
        scenarios.put("sigstop", this::pauseWorker);
        scenarios.put("long-jobs", this::longJobs);
        scenarios.put("sigterm", this::gracefulShutdown);
        scenarios.put("capped-kill-9", this::killUnderACap);
        return scenarios;
    }

    /**
     * kill -9, {@code kills} times, of a worker holding about 200 leased jobs (8 running, the rest
     * claimed ahead), each time started again; three workers, 50 ms jobs. Every job must complete
     * once in effect; the killed workers' jobs run again after their leases expire.
     */
    private Map<String, Object> killWorkers() {
        List<WorkerJvm> workers = fleet.startWorkers(192, List.of("kill-1", "kill-2", "kill-3"));
        List<Long> ids = new ArrayList<>(fleet.enqueue(scale.killJobs(), 50));
        List<Long> heldAtKill = new ArrayList<>();
        for (int kill = 0; kill < scale.kills(); kill++) {
            int index = kill % workers.size();
            WorkerJvm victim = workers.get(index);
            // Enough left for the victim to fill its room, whatever the restarts took.
            if (fleet.pending() < 2_000) {
                ids.addAll(fleet.enqueue(2_000, 50));
            }
            Waits.until(Duration.ofMinutes(1), victim.name() + " to hold 150 jobs", () -> fleet.held(victim) >= 150);
            heldAtKill.add(fleet.held(victim));
            victim.kill9();
            WorkerJvm replacement = fleet.start("kill-" + (index + 1) + "-restart-" + (kill + 1), 192);
            replacement.awaitStarted(START);
            workers.set(index, replacement);
        }
        fleet.awaitCompleted(ids);
        fleet.terminate(workers);
        Map<String, Object> figures = checker.check(ids);
        figures.put("kills", scale.kills());
        figures.put("held_at_kill_avg", Math.round(heldAtKill.stream().mapToLong(Long::longValue).average().orElse(0)));
        return figures;
    }

    /**
     * A cap of {@value #CAP} on three workers with 16 handlers each, and kill -9 of one while it runs
     * capped jobs (200 of 150 ms): from the ledger of every run's start and end (the database's clock; a killed
     * run ends at the kill), no instant has more than the cap running, and the killed worker's
     * slots come back when its leases do.
     */
    private Map<String, Object> killUnderACap() {
        String prefix = "workrow.queues." + FaultWorker.CAPPED_QUEUE;
        String[] capped = {prefix + ".concurrency=16", prefix + ".global-concurrency=" + CAP,
                prefix + ".max-lease-expiries=50", prefix + ".backoff.initial=100ms", prefix + ".backoff.max=100ms"};
        List<WorkerJvm> workers = new ArrayList<>();
        for (String name : List.of("cap-1", "cap-2", "cap-3")) {
            workers.add(fleet.start(name, 0, capped));
        }
        workers.forEach(worker -> worker.awaitStarted(START));
        // 200 jobs of 150 ms take six seconds at the cap. A binding cap promises no worker a slot
        // (one that finishes a job claims again at once, and may keep the slots from the others),
        // so the victim is whichever worker is seen running capped jobs.
        List<Long> ids = fleet.enqueueTo(FaultWorker.CAPPED_QUEUE, 200, 150);
        long[] held = new long[workers.size()];
        Waits.until(Duration.ofMinutes(1), "a worker to run capped jobs", () -> {
            for (int i = 0; i < workers.size(); i++) {
                held[i] = fleet.held(workers.get(i));
            }
            return Arrays.stream(held).anyMatch(count -> count >= 1);
        });
        int index = IntStream.range(0, held.length).reduce((a, b) -> held[b] > held[a] ? b : a).orElseThrow();
        WorkerJvm victim = workers.get(index);
        long heldAtKill = held[index];
        victim.kill9();
        Timestamp killedAt = jdbc.queryForObject("SELECT clock_timestamp()", Timestamp.class);
        WorkerJvm replacement = fleet.start(victim.name() + "-restart", 0, capped);
        replacement.awaitStarted(START);
        workers.set(index, replacement);
        fleet.awaitCompleted(ids);
        fleet.terminate(workers);
        Map<String, Object> figures = checker.check(ids);
        Long[] enqueued = ids.toArray(Long[]::new);
        // Ends before starts at one instant: a slot freed and taken is not two at once.
        Long most = jdbc.queryForObject("""
                WITH runs AS (
                    SELECT started_at, coalesce(ended_at, ?) AS ended_at FROM fault_run WHERE job_id = ANY (?)
                ), events AS (
                    SELECT started_at AS at, 1 AS delta FROM runs UNION ALL SELECT ended_at, -1 FROM runs
                )
                SELECT coalesce(max(running), 0) FROM (
                    SELECT sum(delta) OVER (ORDER BY at, delta ROWS UNBOUNDED PRECEDING) AS running FROM events) AS e
                """, Long.class, killedAt, enqueued);
        figures.put("cap", (long) CAP);
        figures.put("most_running_at_once", most);
        figures.put("held_at_kill", heldAtKill);
        figures.put("runs_cut_by_the_kill", jdbc.queryForObject(
                "SELECT count(*) FROM fault_run WHERE ended_at IS NULL AND job_id = ANY (?)", Long.class,
                (Object) enqueued));
        return figures;
    }

    /** The cap of {@link #killUnderACap}. */
    private static final int CAP = 5;

    /**
     * SIGSTOP one of two workers for three times its lease while it holds jobs, then SIGCONT: its
     * leases expire and move on; its late renewals and completions must all be refused.
     */
    private Map<String, Object> pauseWorker() {
        List<WorkerJvm> workers = fleet.startWorkers(92, List.of("sigstop-frozen", "sigstop-other"));
        WorkerJvm frozen = workers.get(0);
        List<Long> ids = fleet.enqueue(scale.pauseJobs(), 50);
        Waits.until(Duration.ofMinutes(1), "the worker to hold 50 jobs", () -> fleet.held(frozen) >= 50);
        frozen.pause();
        // Counted once frozen: statements it sent before the signal have ended by then.
        Waits.sleep(200);
        long heldAtPause = fleet.held(frozen);
        Waits.sleep(3 * LEASE.toMillis() - 200);
        frozen.resume();
        fleet.awaitCompleted(ids);
        fleet.terminate(workers);
        Map<String, Object> figures = checker.check(ids);
        figures.put("paused_seconds", 3 * LEASE.toSeconds());
        figures.put("held_at_pause", heldAtPause);
        // Thawed, it learns from its first renewal that the jobs moved on; what its handlers then
        // return is dropped, and a transactional handler's completion would match no row.
        figures.put("late_renewals_refused", frozen.logLines("lost its lease (now"));
        figures.put("late_results_dropped", frozen.logLines("lost its lease; nothing recorded")
                + frozen.logLines("lost its lease before its transaction committed"));
        // Jobs that waited in line through the freeze are not started: their leases may be gone.
        figures.put("handed_back_unstarted_lease_running_out", frozen.logLines("since its lease was last confirmed"));
        return figures;
    }

    /**
     * Jobs three times as long as the lease, on two workers, nothing failing: renewals must keep
     * every lease, so no job is rescued by the sweeper and none runs twice.
     */
    private Map<String, Object> longJobs() {
        List<WorkerJvm> workers = fleet.startWorkers(0, List.of("long-1", "long-2"));
        List<Long> ids = fleet.enqueue(scale.longJobs(), 3 * LEASE.toMillis());
        fleet.awaitCompleted(ids);
        fleet.terminate(workers);
        Map<String, Object> figures = checker.check(ids);
        figures.put("job_millis", 3 * LEASE.toMillis());
        figures.put("lease_millis", LEASE.toMillis());
        return figures;
    }

    /**
     * SIGTERM to a worker holding 200 jobs of 500 ms (8 running, 192 claimed ahead) with a 200 ms
     * shutdown timeout: running handlers are interrupted and released, jobs in line handed back
     * unstarted, nothing left to a lease. A second worker then drains everything.
     */
    private Map<String, Object> gracefulShutdown() {
        WorkerJvm stopped = fleet.start("sigterm-stopped", 192, "workrow.shutdown-timeout=200ms");
        stopped.awaitStarted(START);
        List<Long> ids = fleet.enqueue(scale.shutdownJobs(), 500);
        Waits.until(Duration.ofMinutes(1), "the worker to hold 200 jobs", () -> fleet.held(stopped) >= 200);
        long heldAtStop = fleet.held(stopped);
        int exit = stopped.terminate(Duration.ofSeconds(60));
        long leftRunning = jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'running'", Long.class);
        WorkerJvm next = fleet.start("sigterm-next", 192);
        next.awaitStarted(START);
        fleet.awaitCompleted(ids);
        next.terminate(Duration.ofSeconds(60));
        Map<String, Object> figures = checker.check(ids);
        figures.put("held_at_sigterm", heldAtStop);
        figures.put("exit_code", exit);
        figures.put("left_running_after_exit", leftRunning);
        figures.put("handed_back_unstarted", handedBack(stopped.log()));
        figures.put("interrupted_by_sigterm", jdbc.queryForObject(
                "SELECT count(*) FROM workrow_job WHERE last_error LIKE 'interrupted by shutdown%'", Long.class));
        return figures;
    }

    /** The jobs a worker's log says it handed back unstarted at shutdown ("handing back N job(s)"). */
    private static long handedBack(String log) {
        Matcher matcher = Pattern.compile("handing back (\\d+) job").matcher(log);
        long jobs = 0;
        while (matcher.find()) {
            jobs += Long.parseLong(matcher.group(1));
        }
        return jobs;
    }
}

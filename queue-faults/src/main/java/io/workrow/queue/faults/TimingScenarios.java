package io.workrow.queue.faults;

import static io.workrow.queue.faults.FaultFleet.CONCURRENCY;
import static io.workrow.queue.faults.FaultFleet.START;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.springframework.jdbc.core.JdbcTemplate;

/** Clocks that disagree and retries that come back together. */
final class TimingScenarios {

    private static final String SKEW_LEASE = "workrow.lease=10s";

    private final FaultFleet fleet;
    private final JdbcTemplate jdbc;
    private final JdbcJobQueue queue;
    private final FaultChecker checker;
    private final FaultSuite.Scale scale;
    private final FaultDatabase database;

    TimingScenarios(FaultFleet fleet) {
        this.fleet = fleet;
        this.jdbc = fleet.jdbc();
        this.queue = fleet.queue();
        this.checker = fleet.checker();
        this.scale = fleet.scale();
        this.database = fleet.database();
    }

    /** This class's scenarios, by the name their figures carry. */
    Map<String, Supplier<Map<String, Object>>> byName() {
        Map<String, Supplier<Map<String, Object>>> scenarios = new LinkedHashMap<>();
        scenarios.put("clock-skew", this::clockSkew);
        scenarios.put("retry-storm", this::retryStorm);
        return scenarios;
    }

    /**
     * Three workers whose own clocks are 10 minutes behind, 10 minutes ahead, and right (libfaketime
     * in their processes), jobs due 3 s after enqueue, kill -9 of the fast-clocked one mid-run:
     * Workrow compares only the database's clock, so nothing starts early and no lease is taken early.
     */
    private Map<String, Object> clockSkew() {
        Path library = faketime().orElseThrow(() -> new ScenarioUnavailable(
                "no /usr/lib/<arch>/faketime/libfaketime.so.1 (Debian package libfaketime)"));
        // Three JVMs, two of them under libfaketime, starve each other of the two cores for seconds
        // after they start: with the suite's 2 s lease a handler thread stalled between its last
        // look at the lease and its first statement starts after the sweeper took the job, which
        // is not what this scenario is about. A longer lease keeps the stalls inside it.
        WorkerJvm behind = fleet.start("skew-behind", 92, skewed(library, "-10m"), SKEW_LEASE);
        WorkerJvm ahead = fleet.start("skew-ahead", 92, skewed(library, "+10m"), SKEW_LEASE);
        WorkerJvm right = fleet.start("skew-none", 92, SKEW_LEASE);
        List.of(behind, ahead, right).forEach(worker -> worker.awaitStarted(START));
        List<Long> ids = new ArrayList<>();
        List<JobRequest> chunk = new ArrayList<>();
        for (int i = 0; i < scale.pauseJobs(); i++) {
            chunk.add(JobRequest.of(FaultWorker.QUEUE, new FaultWorker.Work(20)).delay(Duration.ofSeconds(3)));
            if (chunk.size() == 500 || i == scale.pauseJobs() - 1) {
                ids.addAll(queue.enqueueAll(chunk));
                chunk.clear();
            }
        }
        // Killed once it has run jobs (to show its clock) and still holds some.
        Waits.until(Duration.ofMinutes(1), "the fast-clocked worker to run 20 jobs and hold 20", () -> fleet.held(ahead) >= 20
                && jdbc.queryForObject("SELECT count(*) FROM fault_invocation WHERE worker = ?", Long.class, ahead.pid()) >= 20);
        ahead.kill9();
        fleet.awaitCompleted(ids);
        behind.terminate(Duration.ofSeconds(60));
        right.terminate(Duration.ofSeconds(60));
        Map<String, Object> figures = checker.check(ids);
        figures.put("started_before_due", jdbc.queryForObject("""
                SELECT count(*) FROM fault_invocation AS invocation JOIN workrow_job AS job ON job.id = invocation.job_id
                WHERE invocation.invoked_at < job.created_at + interval '3 seconds'
                """, Long.class));
        for (WorkerJvm worker : List.of(behind, ahead, right)) {
            Long skew = jdbc.queryForObject("""
                    SELECT round(avg(extract(epoch FROM worker_clock - invoked_at)))::bigint FROM fault_invocation WHERE worker = ?
                    """, Long.class, worker.pid());
            figures.put(worker.name().replace('-', '_') + "_clock_offset_seconds", skew == null ? "no jobs" : skew);
        }
        return figures;
    }

    /**
     * A dependency goes down: 300 jobs fail their first attempt at once, with a 4 s backoff, first
     * without jitter, then with ±50 %. The backoff is long so that the jitter's width (4 s) is wider
     * than however long a loaded machine takes to run the 300 first attempts. The retries' delays (10th and 90th percentile) show the
     * jitter; the most retries due in any 100 ms, beside the most first failures in any 100 ms of
     * the same run, show the storm spread flatter than the outage that caused it. Every job
     * completes on its retry.
     */
    private Map<String, Object> retryStorm() {
        Map<String, Object> figures = new LinkedHashMap<>();
        List<Long> all = new ArrayList<>();
        for (String jitter : List.of("0.0", "0.5")) {
            String flaky = "workrow.queues." + FaultWorker.FLAKY_QUEUE;
            WorkerJvm worker = fleet.start("retry-storm-jitter-" + jitter, 0, flaky + ".concurrency=" + CONCURRENCY,
                    flaky + ".backoff.initial=4s", flaky + ".backoff.max=8s", flaky + ".backoff.multiplier=1.0",
                    flaky + ".backoff.jitter=" + jitter);
            worker.awaitStarted(START);
            List<JobRequest> requests = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                requests.add(JobRequest.of(FaultWorker.FLAKY_QUEUE, new FaultWorker.Work(0)));
            }
            List<Long> ids = queue.enqueueAll(requests);
            fleet.awaitCompleted(ids);
            worker.terminate(Duration.ofSeconds(60));
            // A retry is due at the run_at its failure set (kept through the claim and completion).
            Map<String, Object> storm = jdbc.queryForMap("""
                    SELECT round(percentile_cont(0.1) WITHIN GROUP (ORDER BY delay_ms)) AS p10,
                           round(percentile_cont(0.9) WITHIN GROUP (ORDER BY delay_ms)) AS p90,
                           (SELECT max(due) FROM (SELECT count(*) AS due FROM workrow_job WHERE id = ANY (?)
                                                  GROUP BY floor(extract(epoch FROM run_at) * 10)) AS per_window) AS peak,
                           (SELECT max(failed) FROM (SELECT count(*) AS failed FROM fault_invocation
                                                     WHERE job_id = ANY (?) AND attempt = 1
                                                     GROUP BY floor(extract(epoch FROM invoked_at) * 10)) AS per_window)
                               AS failure_peak
                    FROM (SELECT extract(epoch FROM job.run_at - first.invoked_at) * 1000 AS delay_ms
                          FROM workrow_job AS job
                          JOIN fault_invocation AS first ON first.job_id = job.id AND first.attempt = 1
                          WHERE job.id = ANY (?)) AS delays
                    """, ids.toArray(Long[]::new), ids.toArray(Long[]::new), ids.toArray(Long[]::new));
            String name = "jitter_" + jitter.replace('.', '_');
            figures.put(name + "_retry_delay_p10_ms", ((Number) storm.get("p10")).longValue());
            figures.put(name + "_retry_delay_p90_ms", ((Number) storm.get("p90")).longValue());
            figures.put(name + "_most_retries_due_in_100_ms", ((Number) storm.get("peak")).longValue());
            figures.put(name + "_most_failures_in_100_ms", ((Number) storm.get("failure_peak")).longValue());
            all.addAll(ids);
        }
        Map<String, Object> checked = checker.check(all);
        checked.putAll(figures);
        return checked;
    }

    /** Debian's libfaketime for this machine's architecture, if installed. */
    private static Optional<Path> faketime() {
        try (Stream<Path> architectures = Files.list(Path.of("/usr/lib"))) {
            return architectures.map(directory -> directory.resolve("faketime/libfaketime.so.1")).filter(Files::exists)
                    .findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static Map<String, String> skewed(Path library, String offset) {
        // The monotonic clock stays true: the JVM's timeouts and sleeps must not jump. With it true,
        // libfaketime's fix for timed waits on a faked monotonic clock is not needed, and it made every
        // JVM sleep and timed wait some twenty times slower (a worker started in 90 s instead of 15).
        return Map.of("LD_PRELOAD", library.toString(), "FAKETIME", offset, "FAKETIME_DONT_FAKE_MONOTONIC", "1",
                "FAKETIME_FORCE_MONOTONIC_FIX", "0");
    }
}

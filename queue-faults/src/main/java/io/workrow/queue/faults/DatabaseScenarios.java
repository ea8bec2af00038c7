package io.workrow.queue.faults;

import static io.workrow.queue.faults.FaultFleet.CONCURRENCY;
import static io.workrow.queue.faults.FaultFleet.DRAIN;
import static io.workrow.queue.faults.FaultFleet.LEASE;
import static io.workrow.queue.faults.FaultFleet.START;
import static io.workrow.queue.faults.FaultFleet.WORKER_APPLICATION;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.PgBouncer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the database and the connections to it do under the workers: a restart, a lost listener,
 * PgBouncer in between, a transaction holding the xmin horizon, a pool with nothing left.
 */
final class DatabaseScenarios {

    private final FaultFleet fleet;
    private final JdbcTemplate jdbc;
    private final JdbcJobQueue queue;
    private final FaultChecker checker;
    private final FaultSuite.Scale scale;
    private final FaultDatabase database;
    private final JobStore store;

    DatabaseScenarios(FaultFleet fleet) {
        this.fleet = fleet;
        this.jdbc = fleet.jdbc();
        this.queue = fleet.queue();
        this.checker = fleet.checker();
        this.scale = fleet.scale();
        this.database = fleet.database();
        this.store = fleet.store();
    }

    /** This class's scenarios, by the name their figures carry. */
    Map<String, Supplier<Map<String, Object>>> byName() {
        Map<String, Supplier<Map<String, Object>>> scenarios = new LinkedHashMap<>();
        scenarios.put("pg-restart", this::restartPostgres);
        scenarios.put("listener", this::killListener);
        scenarios.put("pgbouncer", this::throughPgBouncer);
        scenarios.put("held-xmin", this::heldXmin);
        scenarios.put("pool-exhaustion", this::exhaustPool);
        return scenarios;
    }

    /**
     * A fast restart of PostgreSQL while two workers drain and a producer enqueues one job every
     * 5 ms: every session is cut. The same worker JVMs must carry on (pool and listener reconnect)
     * and every enqueue that returned an id must complete.
     */
    private Map<String, Object> restartPostgres() {
        PostgresControl server = PostgresControl.forServer(database.jdbcUrl()).orElseThrow(() -> new ScenarioUnavailable(
                "the database is not on a local Debian cluster (pg_lsclusters) that this user can restart"));
        List<WorkerJvm> workers = fleet.startWorkers(92, List.of("restart-1", "restart-2"));
        List<Long> returned = Collections.synchronizedList(new ArrayList<>());
        AtomicLong failed = new AtomicLong();
        AtomicBoolean producing = new AtomicBoolean(true);
        Thread producer = new Thread(() -> {
            while (producing.get()) {
                try {
                    returned.add(queue.enqueue(JobRequest.of(FaultWorker.QUEUE, new FaultWorker.Work(20))));
                } catch (RuntimeException outage) {
                    failed.incrementAndGet();
                }
                Waits.sleep(5);
            }
        }, "fault-producer");
        producer.start();
        long restartMillis;
        try {
            Waits.sleep(scale.restartSeconds() * 1000L / 3);
            restartMillis = server.restart();
            Waits.sleep(scale.restartSeconds() * 2000L / 3);
        } finally {
            producing.set(false);
            Waits.join(producer);
        }
        List<Long> ids = List.copyOf(returned);
        fleet.awaitCompleted(ids);
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("restart_millis", restartMillis);
        figures.put("enqueues_returned", ids.size());
        figures.put("enqueues_failed", failed.get());
        figures.put("workers_alive", workers.stream().filter(WorkerJvm::isAlive).count());
        figures.put("listener_reconnects", workers.stream()
                .mapToLong(worker -> worker.logLines("Insert listener reconnected")).sum());
        List<Long> after = new ArrayList<>();
        figures.putAll(fleet.pickup("pickup_after_restart", after));
        List<Long> all = new ArrayList<>(ids);
        all.addAll(after);
        fleet.terminate(workers);
        Map<String, Object> checked = checker.check(all);
        checked.putAll(figures);
        return checked;
    }

    /**
     * The LISTEN connection's backend terminated under a running worker (poll interval 1 s): pick-up
     * falls back to polling until the listener reconnects, so it stays within the poll interval.
     * Then a worker with {@code listen-notify=false}, as behind PgBouncer: pick-up within the poll
     * interval.
     */
    private Map<String, Object> killListener() {
        Map<String, Object> figures = new LinkedHashMap<>();
        List<Long> ids = new ArrayList<>();
        WorkerJvm listening = fleet.start("listener", 0, "workrow.poll-interval=1s");
        listening.awaitStarted(START);
        figures.putAll(fleet.pickup("pickup_notify", ids));
        figures.put("listener_backends_killed", jdbc.queryForObject("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = ?
                  AND (query LIKE 'LISTEN %' OR query = 'SELECT 1')
                """, Long.class, WORKER_APPLICATION + listening.name()));
        figures.putAll(fleet.pickup("pickup_listener_killed", ids));
        Waits.until(Duration.ofSeconds(30), "the listener to reconnect",
                () -> listening.logLines("Insert listener reconnected") > 0);
        figures.putAll(fleet.pickup("pickup_reconnected", ids));
        listening.terminate(Duration.ofSeconds(60));
        WorkerJvm polling = fleet.start("poll-only", 0, "workrow.poll-interval=1s", "workrow.listen-notify=false");
        polling.awaitStarted(START);
        figures.putAll(fleet.pickup("pickup_poll_only", ids));
        polling.terminate(Duration.ofSeconds(60));
        figures.put("poll_interval_millis", 1000);
        Map<String, Object> checked = checker.check(ids);
        checked.putAll(figures);
        return checked;
    }

    /**
     * Two workers through a real PgBouncer in transaction pooling mode, {@code listen-notify=false}
     * and no server-side prepared statements, one of them killed with kill -9 mid-drain and
     * started again: nothing lost, no session state relied on.
     */
    private Map<String, Object> throughPgBouncer() {
        if (!PgBouncer.available()) {
            throw new ScenarioUnavailable("/usr/sbin/pgbouncer is not installed (Debian package pgbouncer)");
        }
        try (PgBouncer bouncer = PgBouncer.transactionPooling(
                database.jdbcUrl(), database.user())) {
            String[] through = {"spring.datasource.url=" + fleet.withParameter(bouncer.route(database.jdbcUrl()),
                    "prepareThreshold=0"), "workrow.listen-notify=false",
                    "workrow.queues." + FaultWorker.QUEUE + ".concurrency=4"};
            List<WorkerJvm> workers = fleet.startWorkers(92, List.of("pgbouncer-1", "pgbouncer-2"), through);
            WorkerJvm victim = workers.get(0);
            List<Long> ids = fleet.enqueue(scale.bouncerJobs(), 20);
            Waits.until(Duration.ofMinutes(1), "the worker to hold 50 jobs", () -> fleet.held(victim) >= 50);
            long heldAtKill = fleet.held(victim);
            victim.kill9();
            WorkerJvm replacement = fleet.start("pgbouncer-1-after", 92, through);
            replacement.awaitStarted(START);
            fleet.awaitCompleted(ids);
            fleet.terminate(List.of(replacement, workers.get(1)));
            Map<String, Object> figures = checker.check(ids);
            // PgBouncer lends server sessions to any client, so a session's application name does not
            // say which worker wrote: the one figure that relies on it is left out here.
            figures.remove("accepted_late_finalizes");
            figures.put("held_at_kill", heldAtKill);
            return figures;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * A transaction held open by someone else (an operator's psql, a report) pins the xmin horizon
     * while two workers drain a backlog: the drain rate before, during and after, and whether any
     * worker session held a transaction open for more than a second (only the transactional
     * handler's own, while it runs its 5 ms, may hold one at all).
     */
    private Map<String, Object> heldXmin() {
        List<WorkerJvm> workers = fleet.startWorkers(92, List.of("xmin-1", "xmin-2"));
        List<Long> all = new ArrayList<>();
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("jobs_per_phase", scale.pauseJobs());
        drainRate(all); // warms the workers up: the phases compare the xmin, not the JIT
        figures.put("drain_before_jobs_per_second", drainRate(all));
        AtomicLong longTransactions = new AtomicLong();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (watching.get()) {
                longTransactions.accumulateAndGet(jdbc.queryForObject("""
                        SELECT count(*) FROM pg_stat_activity
                        WHERE datname = current_database() AND application_name LIKE ?
                          AND xact_start < clock_timestamp() - interval '1 second'
                        """, Long.class, WORKER_APPLICATION + "%"), Math::max);
                Waits.sleep(100);
            }
        }, "fault-xmin-watcher");
        watcher.start();
        try {
            jdbc.execute((ConnectionCallback<Object>) connection -> {
                connection.setAutoCommit(false);
                try (Statement holder = connection.createStatement()) {
                    holder.execute("SELECT txid_current()");
                    figures.put("drain_while_xmin_held_jobs_per_second", drainRate(all));
                } finally {
                    connection.rollback();
                    connection.setAutoCommit(true);
                }
                return null;
            });
            figures.put("drain_after_jobs_per_second", drainRate(all));
        } finally {
            watching.set(false);
            Waits.join(watcher);
        }
        fleet.terminate(workers);
        Map<String, Object> checked = checker.check(all);
        checked.putAll(figures);
        checked.put("worker_transactions_open_over_1s", longTransactions.get());
        return checked;
    }

    /**
     * The worker's application takes every connection its pool has left (a burst of requests, or
     * handlers of its own holding connections) for five leases, while the worker runs plain jobs
     * four leases long; another node's sweeper (this process, every 200 ms) takes any lease that
     * expires. The lease keeper and the result writer keep connections of their own: no lease may
     * expire, no job may run twice, and every completion is written while the pool is still held.
     */
    private Map<String, Object> exhaustPool() {
        WorkerJvm worker = fleet.start("pool-1", 0, "spring.datasource.hikari.maximum-pool-size=12",
                "spring.datasource.hikari.connection-timeout=500",
                "workrow.queues." + FaultWorker.POOL_HOG_QUEUE + ".concurrency=1");
        worker.awaitStarted(START);
        long jobMillis = 4 * LEASE.toMillis();
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < CONCURRENCY / 2; i++) {
            requests.add(JobRequest.of(FaultWorker.PLAIN_QUEUE, new FaultWorker.Work(jobMillis)));
        }
        List<Long> ids = queue.enqueueAll(requests);
        Waits.until(Duration.ofSeconds(30), "the jobs to start", () -> jdbc.queryForObject(
                "SELECT count(*) FROM fault_invocation", Long.class) == ids.size());
        long hog = queue.enqueue(FaultWorker.POOL_HOG_QUEUE, new FaultWorker.Work(5 * LEASE.toMillis()));
        Waits.until(Duration.ofSeconds(30), "the application to hold its pool", () -> jdbc.queryForObject(
                "SELECT count(*) FROM fault_pool_hold", Long.class) == 1);
        StaleLeaseSweeper sweeper = new StaleLeaseSweeper(store, 100);
        long deadline = System.nanoTime() + DRAIN.toNanos();
        while (jdbc.queryForObject("SELECT count(*) FROM fault_pool_hold WHERE held_until IS NULL", Long.class) > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the application still holds its pool after " + DRAIN);
            }
            sweeper.runOnce();
            Waits.sleep(200);
        }
        List<Long> all = new ArrayList<>(ids);
        all.add(hog);
        fleet.awaitCompleted(all);
        worker.terminate(Duration.ofSeconds(60));
        Map<String, Object> figures = checker.check(all);
        // More than one hold means the job that took the pool ran again: its lease was lost too.
        figures.put("pool_holds", jdbc.queryForObject("SELECT count(*) FROM fault_pool_hold", Long.class));
        figures.putAll(jdbc.queryForMap("""
                SELECT hold.connections AS connections_held_by_application,
                       round(extract(epoch FROM hold.held_until - hold.held_from) * 1000) AS pool_held_ms,
                       (SELECT count(*) FROM workrow_job AS job
                        WHERE job.id = ANY (?) AND job.finished_at BETWEEN hold.held_from AND hold.held_until)
                           AS completed_while_pool_held
                FROM fault_pool_hold AS hold
                ORDER BY hold.held_from
                LIMIT 1
                """, (Object) ids.toArray(Long[]::new)));
        figures.put("job_millis", jobMillis);
        figures.put("lease_millis", LEASE.toMillis());
        return figures;
    }

    /** Enqueues a phase's jobs of 5 ms at once and returns how fast they drained, in jobs/s. */
    private long drainRate(List<Long> into) {
        long started = System.nanoTime();
        List<Long> ids = fleet.enqueue(scale.pauseJobs(), 5);
        fleet.awaitCompleted(ids);
        into.addAll(ids);
        return Math.round(ids.size() / ((System.nanoTime() - started) / 1e9));
    }
}

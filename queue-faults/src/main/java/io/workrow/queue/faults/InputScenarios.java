package io.workrow.queue.faults;

import static io.workrow.queue.faults.FaultFleet.DRAIN;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.function.Supplier;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Jobs that cannot be run as sent, and producers racing one idempotency key. */
final class InputScenarios {

    private final FaultFleet fleet;
    private final JdbcTemplate jdbc;
    private final JdbcJobQueue queue;
    private final FaultChecker checker;
    private final FaultDatabase database;

    InputScenarios(FaultFleet fleet) {
        this.fleet = fleet;
        this.jdbc = fleet.jdbc();
        this.queue = fleet.queue();
        this.checker = fleet.checker();
        this.database = fleet.database();
    }

    /** This class's scenarios, by the name their figures carry. */
    Map<String, Supplier<Map<String, Object>>> byName() {
        Map<String, Supplier<Map<String, Object>>> scenarios = new LinkedHashMap<>();
        scenarios.put("poison", this::poison);
        scenarios.put("idempotency", this::racingIdempotencyKeys);
        return scenarios;
    }

    /**
     * Payloads the handler's type cannot be read from (a string where a number belongs, an array,
     * a bare string) beside healthy jobs, and a job whose handler halts the JVM, on a queue allowed
     * two lease expiries. The suite restarts the worker whenever it dies, as an orchestrator would.
     * The unreadable jobs go to dead on their first attempt with the reason; the halting job is
     * dead after two crashes, not a crash loop; the healthy jobs complete.
     */
    private Map<String, Object> poison() {
        String[] halting = {"workrow.queues." + FaultWorker.HALT_QUEUE + ".max-lease-expiries=2",
                "workrow.queues." + FaultWorker.HALT_QUEUE + ".backoff.initial=100ms",
                "workrow.queues." + FaultWorker.HALT_QUEUE + ".backoff.max=100ms"};
        List<Long> poison = new ArrayList<>(queue.enqueueAll(List.of(
                JobRequest.of(FaultWorker.QUEUE, Map.of("millis", "soon")),
                JobRequest.of(FaultWorker.QUEUE, List.of(1, 2, 3)),
                JobRequest.of(FaultWorker.QUEUE, "text"))));
        long halt = queue.enqueue(JobRequest.of(FaultWorker.HALT_QUEUE, new FaultWorker.Work(0)));
        List<Long> healthy = fleet.enqueue(200, 5);
        int restarts = 0;
        WorkerJvm worker = fleet.start("poison-0", 0, halting);
        long deadline = System.nanoTime() + DRAIN.toNanos();
        while (!settled(poison, halt, healthy)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("poison jobs still not settled after " + DRAIN);
            }
            if (!worker.isAlive()) {
                restarts++;
                worker = fleet.start("poison-" + restarts, 0, halting);
            }
            Waits.sleep(100);
        }
        worker.terminate(Duration.ofSeconds(60));
        Map<String, Object> figures = checker.check(healthy);
        Map<String, Object> unreadable = jdbc.queryForMap("""
                SELECT count(*) FILTER (WHERE status = 'dead' AND last_error LIKE '%Payload is not a valid%') AS dead,
                       max(attempts) AS attempts
                FROM workrow_job WHERE id = ANY (?)
                """, (Object) poison.toArray(Long[]::new));
        figures.put("unreadable_jobs", poison.size());
        figures.put("unreadable_dead_with_reason", ((Number) unreadable.get("dead")).longValue());
        figures.put("unreadable_most_attempts", ((Number) unreadable.get("attempts")).longValue());
        Map<String, Object> halted = jdbc.queryForMap("SELECT status, lease_expiries, attempts FROM workrow_job WHERE id = ?",
                halt);
        figures.put("halting_job_status", halted.get("status"));
        figures.put("halting_job_lease_expiries", ((Number) halted.get("lease_expiries")).longValue());
        figures.put("worker_restarts", restarts);
        return figures;
    }

    /**
     * 20 producers enqueue one idempotency key at once, each in a transaction of its own; half of
     * them roll back. Per key, 20 rounds: exactly one job ({@code lost} and {@code duplicate_jobs}
     * 0), and every producer that committed got its id.
     */
    private Map<String, Object> racingIdempotencyKeys() {
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
        int rounds = 20;
        int producers = 20;
        long missing = 0;
        long duplicates = 0;
        long committersGivenAnotherId = 0;
        for (int round = 0; round < rounds; round++) {
            String key = "race-" + round;
            CyclicBarrier start = new CyclicBarrier(producers);
            List<Long> committedIds = Collections.synchronizedList(new ArrayList<>());
            List<Thread> threads = new ArrayList<>();
            for (int producer = 0; producer < producers; producer++) {
                boolean rollBack = producer % 2 == 1;
                Thread thread = new Thread(() -> {
                    Waits.await(start);
                    Long id = transaction.execute(status -> {
                        long enqueued = queue.enqueue(JobRequest.of("fault-idempotent", new FaultWorker.Work(0))
                                .idempotencyKey(key));
                        Waits.sleep(5);
                        if (rollBack) {
                            status.setRollbackOnly();
                        }
                        return enqueued;
                    });
                    if (!rollBack) {
                        committedIds.add(id);
                    }
                }, "fault-producer-" + producer);
                threads.add(thread);
                thread.start();
            }
            threads.forEach(Waits::join);
            List<Long> stored = jdbc.queryForList("SELECT id FROM workrow_job WHERE idempotency_key = ?", Long.class, key);
            missing += stored.isEmpty() ? 1 : 0;
            duplicates += Math.max(0, stored.size() - 1);
            committersGivenAnotherId += committedIds.stream().filter(id -> !stored.contains(id)).count();
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("rounds", rounds);
        figures.put("producers_per_key", producers);
        // Half the producers of every key committed: a key without its job lost an enqueue.
        figures.put("lost", missing);
        figures.put("duplicate_jobs", duplicates);
        figures.put("committers_given_another_id", committersGivenAnotherId);
        return figures;
    }

    /** Whether the poison scenario's jobs have all ended. */
    private boolean settled(List<Long> poison, long halt, List<Long> healthy) {
        List<Long> all = new ArrayList<>(poison);
        all.add(halt);
        all.addAll(healthy);
        return jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE id = ANY (?) AND status IN ('completed', 'dead')",
                Long.class, (Object) all.toArray(Long[]::new)) == all.size();
    }
}

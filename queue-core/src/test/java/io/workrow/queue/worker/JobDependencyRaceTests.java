package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The races of jobs that wait for others, run for real: ends on different nodes (each its own
 * pool and store) released by one barrier, producers committing dependents while their dependency
 * ends, cancels racing releases. After each, every job is in one home and every waiting job's
 * counter equals its live edges.
 */
class JobDependencyRaceTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final List<HikariDataSource> pools = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    record Step(int n) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @AfterEach
    void closePools() throws InterruptedException {
        threads.shutdownNow();
        threads.awaitTermination(10, TimeUnit.SECONDS);
        pools.forEach(HikariDataSource::close);
    }

    /** A node: a store on a pool of its own. */
    private JobStore node() {
        JobStore node = database.otherNode(12);
        pools.add((HikariDataSource) node.dataSource());
        return node;
    }

    private static JdbcJobQueue producer(JobStore store) {
        return new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
    }

    private ClaimedPosition claimOne(ClaimStore claims, String queue) {
        List<ClaimedPosition> claimed = claims.claim(queue, "w", 1, Duration.ofMinutes(5), false);
        assertThat(claimed).hasSize(1);
        return claimed.get(0);
    }

    private static EndResult.Verdict verdictOf(Map<PositionEnd, EndResult> results) {
        return results.values().iterator().next().verdict();
    }

    private String status(long id) {
        return database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }

    /** Each job in exactly one home; each waiting job's counter equal to its live edges; no edge to nothing. */
    private void assertConsistent() {
        assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job GROUP BY id HAVING count(*) > 1",
                Long.class)).as("jobs in two homes").isEmpty();
        assertThat(database.jdbc().queryForList("""
                SELECT waiting.id FROM workrow_waiting AS waiting
                WHERE waiting.deps_left <> (SELECT count(*) FROM workrow_dependency AS edge
                                            WHERE edge.waiter_id = waiting.id)
                """, Long.class)).as("waiting jobs whose counter is not their live edges").isEmpty();
        assertThat(database.jdbc().queryForList("""
                SELECT edge.waiter_id FROM workrow_dependency AS edge
                WHERE NOT EXISTS (SELECT 1 FROM workrow_waiting AS waiting WHERE waiting.id = edge.waiter_id)
                """, Long.class)).as("edges of jobs that no longer wait").isEmpty();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_waiting WHERE unregistered",
                Integer.class)).as("rows left unregistered after commit").isZero();
    }

    @Test
    void twoDependenciesEndingAtOnceOnTwoNodesReleaseTheirDependentExactlyOnce() throws Exception {
        JobStore first = node();
        JobStore second = node();
        JdbcJobQueue producer = producer(first);
        for (int round = 0; round < 150; round++) {
            long a = producer.enqueue(JobRequest.of("left", new Step(round)));
            long b = producer.enqueue(JobRequest.of("right", new Step(round)));
            long waiter = producer.enqueue(JobRequest.of("joined", new Step(round)).after(a, b));
            ClaimedPosition heldA = claimOne(first.claims(), "left");
            ClaimedPosition heldB = claimOne(second.claims(), "right");
            CyclicBarrier together = new CyclicBarrier(2);
            Future<Map<PositionEnd, EndResult>> endA = threads.submit(() -> {
                together.await();
                return first.claims().endMany(List.of(PositionEnd.completed(heldA)));
            });
            Future<Map<PositionEnd, EndResult>> endB = threads.submit(() -> {
                together.await();
                return second.claims().endMany(List.of(PositionEnd.completed(heldB)));
            });
            assertThat(verdictOf(endA.get(10, TimeUnit.SECONDS))).isEqualTo(EndResult.Verdict.ACCEPTED);
            assertThat(verdictOf(endB.get(10, TimeUnit.SECONDS))).isEqualTo(EndResult.Verdict.ACCEPTED);

            assertThat(status(waiter)).as("round %d", round).isEqualTo("pending");
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_ready WHERE id = ?",
                    Integer.class, waiter)).isOne();
        }
        assertConsistent();
    }

    @Test
    void aFanInOfAThousandAcrossThreeRuntimesRunsItsDependentOnceWithEveryResult() {
        JdbcJobQueue producer = producer(database.store());
        List<Long> parts = producer.enqueueAll(LongStream.range(0, 1000)
                .mapToObj(n -> JobRequest.of("part", new Step((int) n))).toList());
        long joined = producer.enqueue(JobRequest.of("join", new Step(-1))
                .after(parts.stream().mapToLong(Long::longValue).toArray()));
        Map<Long, Integer> joinedRuns = new ConcurrentHashMap<>();
        AtomicInteger resultsSeen = new AtomicInteger();
        List<WorkerRuntime> runtimes = new ArrayList<>();
        try {
            for (int node = 0; node < 3; node++) {
                JobStore store = node();
                WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                        .pollInterval(Duration.ofMillis(200))
                        .function("part", Step.class, (step, job) -> step.n() * 2,
                                QueueOptions.defaults().withConcurrency(4).withBatchSize(7))
                        .handler("join", Step.class, (step, job) -> {
                            joinedRuns.merge(job.id(), 1, Integer::sum);
                            resultsSeen.set(job.dependencyResults(Integer.class).size());
                        }, QueueOptions.defaults())
                        .build();
                runtimes.add(runtime);
                runtime.start();
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> "completed".equals(status(joined)));
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }
        assertThat(joinedRuns).containsExactly(Map.entry(joined, 1));
        assertThat(resultsSeen.get()).isEqualTo(1000);
        assertConsistent();
    }

    @Test
    void aDependentCommittedWhileItsDependencyEndsIsReleasedOrCancelledNeverStranded() throws Exception {
        JobStore producerNode = node();
        JobStore workerNode = node();
        TransactionTemplate producerTransactions = new TransactionTemplate(
                new DataSourceTransactionManager(producerNode.dataSource()));
        JdbcJobQueue producer = producer(producerNode);
        JdbcJobQueue setup = producer(database.store());
        String[] ends = {"complete", "fail", "discard", "cancel", "claim-and-complete"};
        for (int round = 0; round < 200; round++) {
            int n = round;
            String end = ends[round % ends.length];
            long dependency = setup.enqueue(JobRequest.of("upstream", new Step(round)).maxAttempts(
                    end.equals("fail") ? 1 : 5));
            ClaimedPosition held = end.equals("cancel") || end.equals("claim-and-complete") ? null
                    : claimOne(workerNode.claims(), "upstream");
            CyclicBarrier together = new CyclicBarrier(2);
            Future<Long> dependent = threads.submit(() -> producerTransactions.execute(status -> {
                long id = producer.enqueue(JobRequest.of("downstream", new Step(n)).after(dependency));
                meet(together);
                sleepUpTo(2);
                return id;
            }));
            Future<?> ending = threads.submit(() -> {
                meet(together);
                sleepUpTo(2);
                switch (end) {
                    case "complete" -> workerNode.claims().endMany(List.of(PositionEnd.completed(held)));
                    case "fail" -> workerNode.claims().endMany(List.of(PositionEnd.failed(held, "boom",
                            Duration.ZERO)));
                    case "discard" -> workerNode.claims().endMany(List.of(PositionEnd.discarded(held, "gone")));
                    case "cancel" -> workerNode.cancel("upstream", dependency);
                    default -> {
                        List<ClaimedPosition> claimed = workerNode.claims().claim("upstream", "w", 1,
                                Duration.ofMinutes(5), false);
                        if (!claimed.isEmpty()) {
                            workerNode.claims().endMany(List.of(PositionEnd.completed(claimed.get(0))));
                        }
                    }
                }
                return null;
            });
            long id = dependent.get(20, TimeUnit.SECONDS);
            ending.get(20, TimeUnit.SECONDS);
            String upstream = status(dependency);
            String expected = switch (upstream) {
                case "completed" -> "pending";
                case "dead", "cancelled" -> "cancelled";
                default -> "waiting";
            };
            assertThat(status(id)).as("round %d: %s, the dependency %s", round, end, upstream).isEqualTo(expected);
            database.jdbc().update("DELETE FROM workrow_job WHERE queue = 'upstream' AND status = 'pending'");
        }
        assertConsistent();
    }

    @Test
    void aCancelRacingTheReleaseOfAWaitingJobWinsOrLosesWhole() throws Exception {
        JobStore first = node();
        JobStore second = node();
        JdbcJobQueue producer = producer(first);
        for (int round = 0; round < 150; round++) {
            long dependency = producer.enqueue(JobRequest.of("upstream", new Step(round)));
            long waiter = producer.enqueue(JobRequest.of("downstream", new Step(round)).after(dependency));
            ClaimedPosition held = claimOne(first.claims(), "upstream");
            CyclicBarrier together = new CyclicBarrier(2);
            Future<?> end = threads.submit(() -> {
                together.await();
                return first.claims().endMany(List.of(PositionEnd.completed(held)));
            });
            Future<Boolean> cancel = threads.submit(() -> {
                together.await();
                return second.cancel("downstream", waiter);
            });
            end.get(10, TimeUnit.SECONDS);
            // Released first and cancelled from ready, or cancelled while waiting: either way once.
            assertThat(cancel.get(10, TimeUnit.SECONDS)).as("a waiting or pending job is always cancellable").isTrue();
            assertThat(status(waiter)).isEqualTo("cancelled");
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?",
                    Integer.class, waiter)).as("one cancelled outcome").isOne();
        }
        assertConsistent();
    }

    @Test
    void twoRootsDyingAtOnceCancelTheirDiamondOnceAndReleaseItsSettledWaiters() throws Exception {
        JobStore first = node();
        JobStore second = node();
        JdbcJobQueue producer = producer(first);
        for (int round = 0; round < 60; round++) {
            long left = producer.enqueue(JobRequest.of("left", new Step(round)));
            long right = producer.enqueue(JobRequest.of("right", new Step(round)));
            long midLeft = producer.enqueue(JobRequest.of("mid", new Step(round)).after(left));
            long midRight = producer.enqueue(JobRequest.of("mid", new Step(round)).after(right));
            long leaf = producer.enqueue(JobRequest.of("leaf", new Step(round)).after(midLeft, midRight));
            long settledLeaf = producer.enqueue(JobRequest.of("leaf", new Step(round)).afterSettled(midLeft, midRight));
            ClaimedPosition heldLeft = claimOne(first.claims(), "left");
            ClaimedPosition heldRight = claimOne(second.claims(), "right");
            CyclicBarrier together = new CyclicBarrier(2);
            Future<?> dieLeft = threads.submit(() -> {
                together.await();
                return first.claims().endMany(List.of(PositionEnd.discarded(heldLeft, "left gone")));
            });
            Future<?> dieRight = threads.submit(() -> {
                together.await();
                return second.claims().endMany(List.of(PositionEnd.discarded(heldRight, "right gone")));
            });
            dieLeft.get(10, TimeUnit.SECONDS);
            dieRight.get(10, TimeUnit.SECONDS);

            assertThat(List.of(status(midLeft), status(midRight), status(leaf))).containsOnly("cancelled");
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE job_id = ?",
                    Integer.class, leaf)).as("the leaf cancelled once").isOne();
            assertThat(status(settledLeaf)).isEqualTo("pending");
        }
        assertConsistent();
    }

    @Test
    void producersAddingDependentsToRunningJobsOnThreeRuntimesLoseNothingAndNeverFail() throws Exception {
        Map<Long, Integer> runs = new ConcurrentHashMap<>();
        List<WorkerRuntime> runtimes = new ArrayList<>();
        List<Long> enqueued = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Throwable> producerErrors = java.util.Collections.synchronizedList(new ArrayList<>());
        try {
            for (int node = 0; node < 3; node++) {
                JobStore store = node();
                WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                        .pollInterval(Duration.ofMillis(200))
                        .function("dag", Step.class, (step, job) -> {
                            runs.merge(job.id(), 1, Integer::sum);
                            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                            return step.n();
                        }, QueueOptions.defaults().withConcurrency(4).withBatchSize(8))
                        .build();
                runtimes.add(runtime);
                runtime.start();
            }
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                JobStore producerNode = node();
                JdbcJobQueue producer = producer(producerNode);
                TransactionTemplate transactions = new TransactionTemplate(
                        new DataSourceTransactionManager(producerNode.dataSource()));
                producers.add(threads.submit(() -> {
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
                    int n = 0;
                    while (System.nanoTime() < until) {
                        int step = n++;
                        try {
                            enqueued.add(transactions.execute(status -> {
                                JobRequest request = JobRequest.of("dag", new Step(step));
                                List<Long> known = List.copyOf(enqueued);
                                if (known.size() > 3 && ThreadLocalRandom.current().nextInt(4) > 0) {
                                    // Among the newest jobs, most of them queued or running right now.
                                    int from = Math.max(0, known.size() - 30);
                                    long[] after = ThreadLocalRandom.current().longs(1 + ThreadLocalRandom.current()
                                            .nextInt(3), from, known.size()).map(i -> known.get((int) i)).toArray();
                                    request = ThreadLocalRandom.current().nextBoolean() ? request.after(after)
                                            : request.afterSettled(after);
                                }
                                long id = producer.enqueue(request);
                                sleepUpTo(2);
                                return id;
                            }));
                        } catch (RuntimeException e) {
                            producerErrors.add(e);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> producer : producers) {
                producer.get(60, TimeUnit.SECONDS);
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status IN ('pending', 'scheduled', 'waiting', 'running')",
                    Integer.class) == 0);
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }
        assertThat(producerErrors).as("producers' commits never fail").isEmpty();
        assertThat(enqueued).hasSizeGreaterThan(200);
        assertThat(database.jdbc().queryForList("SELECT DISTINCT status FROM workrow_job", String.class))
                .as("every job completed: none of them fails").containsExactly("completed");
        assertThat(runs.keySet()).containsExactlyInAnyOrderElementsOf(enqueued);
        assertThat(runs.values()).as("each job ran once").containsOnly(1);
        assertConsistent();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_dependency", Integer.class)).isZero();
    }

    private static void meet(CyclicBarrier barrier) {
        try {
            barrier.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleepUpTo(int millis) {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextInt(millis + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

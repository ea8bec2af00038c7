package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.BreakerStatus;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.BreakerStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class CircuitBreakerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final BreakerOptions BREAKER = new BreakerOptions(3, Duration.ofSeconds(3), 1);

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final Map<String, AtomicInteger> transitions = new ConcurrentHashMap<>();
    private final QueueMetrics countingTransitions = new QueueMetrics() {
        @Override
        public void breakerTransition(String queue, BreakerStatus.State state) {
            transitions.computeIfAbsent(state.columnValue(), s -> new AtomicInteger()).incrementAndGet();
        }
    };

    record Call(int n) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_breaker");
    }

    private WorkerRuntime runtime(io.workrow.queue.JobHandler<Call> handler) {
        return runtime(handler, BREAKER);
    }

    private WorkerRuntime runtime(io.workrow.queue.JobHandler<Call> handler, BreakerOptions breaker) {
        return WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(100))
                .metrics(countingTransitions)
                .handler("flaky-api", Call.class, handler, QueueOptions.defaults()
                        .withConcurrency(2)
                        .withBackoff(new RetryBackoff(Duration.ofMillis(10), 1.0, Duration.ofMillis(10), 0.0))
                        .withBreaker(breaker))
                .build();
    }

    private void enqueue(int jobs) {
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            requests.add(JobRequest.of("flaky-api", new Call(i)).maxAttempts(1000));
        }
        jobQueue.enqueueAll(requests);
    }

    private BreakerStatus breaker() {
        return database.store().breakers().list().stream().filter(b -> b.queue().equals("flaky-api")).findFirst()
                .orElseThrow();
    }

    private int attempts() {
        return database.jdbc().queryForObject("SELECT coalesce(sum(attempts), 0) FROM workrow_job", Integer.class);
    }

    /**
     * Every node reports every batch; a batch of successes on a healthy breaker must not lock (and
     * so write) its row, or all nodes' result writers would queue on it. xmax shows a lock.
     */
    @Test
    void aBatchOfSuccessesOnAHealthyBreakerLeavesItsRowUntouched() {
        var store = database.store().breakers();
        store.register("flaky-api");
        java.util.function.Supplier<String> rowVersion = () -> database.jdbc().queryForObject(
                "SELECT ctid::text || '/' || xmax::text FROM workrow_breaker WHERE queue = 'flaky-api'", String.class);
        String before = rowVersion.get();
        assertThat(store.record("flaky-api", 16, 0, 0, 3, Duration.ofSeconds(3))).isEmpty();
        assertThat(rowVersion.get()).as("neither locked nor updated").isEqualTo(before);

        assertThat(store.record("flaky-api", 0, 1, 1, 3, Duration.ofSeconds(3))).isPresent();
        assertThat(breaker().failures()).isEqualTo(1);
        assertThat(store.record("flaky-api", 4, 0, 0, 3, Duration.ofSeconds(3))).as("a success resets the count")
                .isPresent();
        assertThat(breaker().failures()).isZero();
    }

    @Test
    void anOpenBreakerStopsClaimsSoAFailingDependencyCostsOnlyAHandfulOfAttempts() throws Exception {
        enqueue(50);
        AtomicInteger calls = new AtomicInteger();
        try (WorkerRuntime runtime = runtime((call, job) -> {
            calls.incrementAndGet();
            throw new IllegalStateException("503 from the payment provider");
        })) {
            runtime.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> breaker().state() == BreakerStatus.State.OPEN);
            Thread.sleep(10_000); // the window the count covers: three cooldowns and some
        }
        System.out.printf("failing dependency, breaker threshold 3, cooldown 3 s: %d handler calls in 10 s%n", calls.get());
        // The threshold, what was in flight as it opened, then one probe per cooldown.
        assertThat(calls.get()).as("handler calls in 10 s").isBetween(3, 3 + 4 + 4);
        assertThat(attempts()).isEqualTo(calls.get());
        assertThat(breaker().state()).isIn(BreakerStatus.State.OPEN, BreakerStatus.State.HALF_OPEN);
        assertThat(transitions.get("open").get()).as("opened, then reopened by failed probes").isGreaterThanOrEqualTo(3);
        assertThat(transitions.get("half_open").get()).isGreaterThanOrEqualTo(2);
        assertThat(transitions).doesNotContainKey("closed");
    }

    @Test
    void withoutABreakerTheSameFailingQueueSpendsHundredsOfAttemptsInTwoSeconds() throws Exception {
        enqueue(50);
        AtomicInteger calls = new AtomicInteger();
        try (WorkerRuntime runtime = runtime((call, job) -> {
            calls.incrementAndGet();
            throw new IllegalStateException("503 from the payment provider");
        }, null)) {
            runtime.start();
            Thread.sleep(2_000); // the window the count covers
        }
        System.out.printf("failing dependency, no breaker: %d handler calls in 2 s%n", calls.get());
        assertThat(calls.get()).isGreaterThan(100);
    }

    @Test
    void aSuccessfulProbeClosesTheBreakerAndTheBacklogRuns() {
        enqueue(20);
        AtomicBoolean dependencyUp = new AtomicBoolean(false);
        try (WorkerRuntime runtime = runtime((call, job) -> {
            if (!dependencyUp.get()) {
                throw new IllegalStateException("connection refused");
            }
        })) {
            runtime.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> breaker().state() == BreakerStatus.State.OPEN);
            int attemptsWhileDown = attempts();
            dependencyUp.set(true);
            await().atMost(Duration.ofSeconds(15)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 20);
            assertThat(attemptsWhileDown).isLessThanOrEqualTo(3 + 4);
        }
        BreakerStatus closed = breaker();
        assertThat(closed.state()).isEqualTo(BreakerStatus.State.CLOSED);
        assertThat(closed.failures()).isZero();
        assertThat(closed.reason()).isEqualTo("a half-open probe succeeded");
        assertThat(transitions.get("closed").get()).isEqualTo(1);
    }

    @Test
    void theBreakerStaysOpenAcrossARestartOfEveryRuntime() throws Exception {
        enqueue(10);
        try (WorkerRuntime first = runtime((call, job) -> {
            throw new IllegalStateException("down");
        })) {
            first.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> breaker().state() == BreakerStatus.State.OPEN);
        }
        int attemptsBefore = attempts();
        AtomicInteger calls = new AtomicInteger();
        try (WorkerRuntime restarted = runtime((call, job) -> calls.incrementAndGet())) {
            restarted.start();
            // Well inside the 3 s cooldown that began before the restart: nothing is claimed.
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> calls.get() == 0);
            assertThat(breaker().state()).isEqualTo(BreakerStatus.State.OPEN);
            await().atMost(Duration.ofSeconds(10)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 10);
        }
        assertThat(attempts()).isEqualTo(attemptsBefore + 10);
        assertThat(breaker().state()).isEqualTo(BreakerStatus.State.CLOSED);
    }

    @Test
    void manyPollersAtOnceAreGrantedNoMoreThanTheRoundsProbes() throws Exception {
        BreakerStore breakers = database.store().breakers();
        breakers.register("flaky-api");
        database.jdbc().update("UPDATE workrow_breaker SET state = 'open', open_until = now() - interval '1 second'"
                + " WHERE queue = 'flaky-api'");
        int pollers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(pollers);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> grants = new ArrayList<>();
        for (int i = 0; i < pollers; i++) {
            grants.add(pool.submit(() -> {
                go.await();
                return breakers.acquireProbes("flaky-api", 2, 3, Duration.ofMinutes(1))
                        .map(BreakerStore.ProbeGrant::probes).orElse(0);
            }));
        }
        go.countDown();
        int granted = 0;
        for (Future<Integer> grant : grants) {
            granted += grant.get();
        }
        pool.shutdown();
        assertThat(granted).isEqualTo(3);
        assertThat(breaker().state()).isEqualTo(BreakerStatus.State.HALF_OPEN);
        breakers.returnProbes("flaky-api", 1);
        assertThat(breakers.acquireProbes("flaky-api", 5, 3, Duration.ofMinutes(1)).map(BreakerStore.ProbeGrant::probes))
                .as("a probe given back can be taken again, and only that one").contains(1);
    }

    @Test
    void aBreakerOpenedByHandHoldsEveryNodeUntilClosedByHand() {
        JdbcQueueAdmin admin = new JdbcQueueAdmin(database.store(), countingTransitions);
        admin.openBreaker("flaky-api", "provider maintenance window");
        enqueue(5);
        AtomicInteger calls = new AtomicInteger();
        try (WorkerRuntime one = runtime((call, job) -> calls.incrementAndGet());
                WorkerRuntime two = runtime((call, job) -> calls.incrementAndGet())) {
            one.start();
            two.start();
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> calls.get() == 0);
            assertThat(breaker().openUntil()).as("until closed by hand").isNull();
            assertThat(breaker().reason()).isEqualTo("opened by hand: provider maintenance window");

            assertThat(admin.closeBreaker("flaky-api")).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() == 5);
        }
        assertThat(transitions.get("open").get()).isEqualTo(1);
        assertThat(transitions.get("closed").get()).isEqualTo(1);
        assertThat(admin.closeBreaker("no-such-queue")).isFalse();
    }
}

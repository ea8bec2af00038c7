package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A busy plain queue claims from two loops at once, and only when the pool has a connection for
 * the second; the two together never hold more room than one poller has, and every job runs once.
 */
class OverlappingClaimsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Job(int n) {
    }

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @Test
    void aBusyQueueClaimsFromTwoLoopsAndRunsEveryJobOnce() {
        // Claims of 100: the second loop claims whole ones, which the line's room has often.
        Map<String, LongAdder> claimedBy = drain("busy", database.dataSource(), QueueOptions.defaults().withBatchSize(100),
                30_000);

        assertThat(claimedBy).as("jobs claimed per claiming thread").containsKeys("workrow-poller-busy",
                "workrow-poller-busy-2");
        assertThat(claimedBy.get("workrow-poller-busy-2").sum()).as("the second loop's share").isPositive();
    }

    @Test
    void aPoolWithoutAConnectionToSpareKeepsClaimsOneAtATime() {
        // Listener, one poller, writer, keeper, handlers' own writes, promoter and four maintenance
        // tasks: ten, the whole pool.
        try (HikariDataSource pool = pool(10)) {
            Map<String, LongAdder> claimedBy = drain("narrow", pool, QueueOptions.defaults(), 10_000);

            assertThat(claimedBy.keySet()).containsExactly("workrow-poller-narrow");
        }
    }

    @Test
    void orderedAndFairQueuesClaimOneAtATime() {
        assertThat(QueueOptions.defaults().overlapsClaims()).isTrue();
        assertThat(QueueOptions.defaults().withOrdering(KeyOrdering.BLOCK).overlapsClaims()).isFalse();
        assertThat(QueueOptions.defaults().withFairness(FairnessOptions.weighted()).overlapsClaims()).isFalse();
        assertThat(QueueOptions.defaults().withPrefetch(100).overlapsClaims()).as("a fixed prefetch").isFalse();
        assertThat(QueueOptions.defaults().withBreaker(BreakerOptions.defaults()).overlapsClaims()).isFalse();
    }

    @Test
    void twoLoopsTakingRoomAtOnceNeverHoldMoreThanTheRoom() throws Exception {
        PollerRoom room = new PollerRoom(8, 100);
        AtomicInteger held = new AtomicInteger();
        AtomicInteger mostHeld = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> loops = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread loop = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int round = 0; round < 20_000; round++) {
                    int taken = room.take(37);
                    mostHeld.accumulateAndGet(held.addAndGet(taken), Math::max);
                    held.addAndGet(-taken);
                    room.give(taken);
                }
            });
            loop.start();
            loops.add(loop);
        }
        go.countDown();
        for (Thread loop : loops) {
            loop.join(TimeUnit.SECONDS.toMillis(30));
        }

        assertThat(mostHeld.get()).as("room held at once by four takers").isPositive().isLessThanOrEqualTo(108);
        assertThat(room.free()).as("everything given back").isEqualTo(108);
    }

    /** Runs {@code jobs} no-op jobs of {@code queue} to completion; returns the jobs claimed per claiming thread. */
    private Map<String, LongAdder> drain(String queue, DataSource dataSource, QueueOptions options, int jobs) {
        jobQueue.enqueueAll(IntStream.range(0, jobs).mapToObj(n -> JobRequest.of(queue, new Job(n))).toList());
        Map<String, LongAdder> claimedBy = new ConcurrentHashMap<>();
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        WorkerRuntime runtime = WorkerRuntime.builder(dataSource)
                .metrics(new QueueMetrics() {
                    @Override
                    public void claimed(String claimedQueue, int count) {
                        claimedBy.computeIfAbsent(Thread.currentThread().getName(), name -> new LongAdder()).add(count);
                    }
                })
                .handler(queue, Job.class, (job, context) -> runs.computeIfAbsent(context.id(),
                        id -> new AtomicInteger()).incrementAndGet(), options)
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(20)).until(() -> runs.size() == jobs);
        } finally {
            runtime.stop();
        }
        assertThat(runs.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE queue = ? AND status = 'completed'",
                Integer.class, queue)).isEqualTo(jobs);
        assertThat(claimedBy.values().stream().mapToLong(LongAdder::sum).sum()).as("claimed in all").isEqualTo(jobs);
        return claimedBy;
    }

    private static HikariDataSource pool(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.server().user());
        config.setPassword(database.server().password());
        config.setMaximumPoolSize(size);
        return new HikariDataSource(config);
    }
}

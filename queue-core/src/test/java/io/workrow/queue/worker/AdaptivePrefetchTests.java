package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
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
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * The prefetch a queue gets when it fixes none: it follows the handlers' throughput (short handlers
 * grow a line up to two claims, slow ones keep none), so nodes share a slow backlog, and a line
 * grown by short jobs goes back unstarted at stop like a fixed one.
 */
class AdaptivePrefetchTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Nap(long millis) {
    }

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @Test
    void theLineHoldsATenthOfASecondOfMeasuredThroughputUpToItsCeiling() {
        AdaptivePrefetch prefetch = new AdaptivePrefetch(1000);
        prefetch.begin(0);
        assertThat(prefetch.current()).as("nothing measured yet").isZero();

        finish(prefetch, 400);
        assertThat(prefetch.update(20 * MS)).as("a span too short to sample changes nothing").isZero();
        assertThat(prefetch.update(100 * MS)).as("400 in 100 ms: 4,000/s, 400 in a tenth of a second").isEqualTo(400);
        assertThat(prefetch.update(150 * MS)).as("a quiet 50 ms weighs by its time: 1 - e^-0.25 of the average")
                .isBetween(300, 320);

        long now = 150;
        for (int i = 0; i < 12; i++) {
            finish(prefetch, 5_000);
            now += 100;
            prefetch.update(now * MS);
        }
        assertThat(prefetch.current()).as("50,000/s would want 5,000: two claims at most").isBetween(990, 1000);

        now += 1_000;
        assertThat(prefetch.update(now * MS)).as("an idle second forgets the drain").isLessThanOrEqualTo(10);

        finish(prefetch, 8);
        now += 1_000;
        assertThat(prefetch.update(now * MS)).as("8 handlers of 1 s: 8/s keeps no line").isZero();
    }

    @Test
    void timeBeforeThePollerRunsIsNoSample() {
        AdaptivePrefetch prefetch = new AdaptivePrefetch(1000);
        finish(prefetch, 3);
        prefetch.begin(5_000 * MS);
        finish(prefetch, 300);
        assertThat(prefetch.update(5_100 * MS)).as("3,000/s from the start, the earlier finishes not counted")
                .isEqualTo(300);
    }

    @Test
    void shortHandlersGrowALineAndRunEveryJobOnce() {
        int jobs = 20_000;
        enqueue("short", jobs, 0);
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        AtomicInteger mostInFlight = new AtomicInteger();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .handler("short", Nap.class, (nap, job) -> runs.computeIfAbsent(job.id(), id -> new AtomicInteger())
                        .incrementAndGet(), QueueOptions.defaults())
                .build();
        AtomicInteger mostPrefetch = new AtomicInteger();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(5)).until(() -> {
                mostPrefetch.accumulateAndGet(runtime.prefetch("short"), Math::max);
                mostInFlight.accumulateAndGet(runtime.inFlightCount(), Math::max);
                return runs.size() == jobs;
            });
        } finally {
            runtime.stop();
        }

        assertThat(mostPrefetch.get()).as("a line grew for short handlers")
                .isGreaterThanOrEqualTo(50).isLessThanOrEqualTo(2 * QueueOptions.DEFAULT_BATCH_SIZE);
        // In flight counts the jobs in line, running, and finished with their outcome on its way.
        assertThat(mostInFlight.get()).as("jobs held beyond the 8 slots").isGreaterThan(QueueOptions.DEFAULT_CONCURRENCY);
        assertThat(runs.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'completed'",
                Integer.class)).isEqualTo(jobs);
    }

    @Test
    void twoNodesShareASlowBacklogBecauseNeitherClaimsAhead() {
        int jobs = 24;
        enqueue("slow", jobs, 300);
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        List<WorkerRuntime> runtimes = new ArrayList<>();
        List<AtomicInteger> ranBy = new ArrayList<>();
        List<AtomicInteger> mostPrefetch = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            AtomicInteger ran = new AtomicInteger();
            ranBy.add(ran);
            mostPrefetch.add(new AtomicInteger());
            runtimes.add(WorkerRuntime.builder(database.dataSource())
                    .handler("slow", Nap.class, (nap, job) -> {
                        runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                        ran.incrementAndGet();
                        Thread.sleep(nap.millis());
                    }, QueueOptions.defaults().withConcurrency(2))
                    .build());
        }
        runtimes.forEach(WorkerRuntime::start);
        try {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(() -> {
                for (int i = 0; i < 2; i++) {
                    mostPrefetch.get(i).accumulateAndGet(runtimes.get(i).prefetch("slow"), Math::max);
                }
                return database.jdbc().queryForObject(
                        "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == jobs;
            });
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }

        // 2 handlers of 300 ms finish under 7 jobs a second: a tenth of a second of that is no job.
        assertThat(mostPrefetch).allSatisfy(most -> assertThat(most.get()).as("a node's line").isLessThanOrEqualTo(1));
        assertThat(ranBy).allSatisfy(ran -> assertThat(ran.get()).as("each node ran a share").isGreaterThanOrEqualTo(6));
        assertThat(runs.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void aLineGrownByShortJobsGoesBackUnstartedAtStop() throws Exception {
        int jobs = 20_000;
        enqueue("grown", jobs, 0);
        CountDownLatch stuck = new CountDownLatch(1);
        AtomicInteger handled = new AtomicInteger();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .shutdownTimeout(Duration.ofSeconds(1))
                .handler("grown", Nap.class, (nap, job) -> {
                    if (handled.incrementAndGet() > 5_000) {
                        // Every handler blocks from here on: the line the poller grew stays in line.
                        stuck.countDown();
                        Thread.sleep(60_000);
                    }
                }, QueueOptions.defaults())
                .build();
        runtime.start();
        assertThat(stuck.await(60, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> runtime.inFlightCount() > QueueOptions.DEFAULT_CONCURRENCY);
        int heldAtStop = runtime.inFlightCount();
        Logger pollerLog = (Logger) LoggerFactory.getLogger(QueuePoller.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        pollerLog.addAppender(logged);

        try {
            runtime.stop();
        } finally {
            pollerLog.detachAppender(logged);
        }

        int started = handled.get();
        assertThat(started).as("at most the 8 stuck handlers started beyond the first 5,000")
                .isLessThanOrEqualTo(5_000 + QueueOptions.DEFAULT_CONCURRENCY);
        Map<String, Object> counts = database.jdbc().queryForMap("SELECT"
                + " count(*) FILTER (WHERE status = 'completed') AS completed,"
                + " count(*) FILTER (WHERE status = 'pending' AND attempts = 0) AS untouched,"
                + " count(*) FILTER (WHERE status = 'pending' AND attempts = 1) AS interrupted,"
                + " count(*) FILTER (WHERE status = 'running') AS running FROM workrow_job");
        assertThat(((Number) counts.get("completed")).intValue()).isEqualTo(5_000);
        assertThat(((Number) counts.get("running")).intValue()).as("nothing left held").isZero();
        assertThat(((Number) counts.get("interrupted")).intValue()).isEqualTo(started - 5_000);
        assertThat(((Number) counts.get("untouched")).intValue()).as("the line and the never-claimed, attempts back")
                .isEqualTo(jobs - started);
        assertThat(heldAtStop).isGreaterThan(QueueOptions.DEFAULT_CONCURRENCY);
        assertThat(runtime.inFlightCount()).isZero();
        // One line for the whole line handed back, naming its first ids, not thousands of them.
        List<String> handBacks = logged.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(message -> message.contains("handing back")).toList();
        assertThat(handBacks).hasSize(1);
        int handedBack = Integer.parseInt(handBacks.get(0).replaceAll(".*handing back (\\d+) job.*", "$1"));
        assertThat(handedBack).as("the line grown by short jobs").isGreaterThan(20);
        assertThat(handBacks.get(0)).endsWith(" and " + (handedBack - 20) + " more").hasSizeLessThan(600);
    }

    private void enqueue(String queue, int jobs, long napMillis) {
        for (int from = 0; from < jobs; from += 1000) {
            jobQueue.enqueueAll(IntStream.range(from, Math.min(jobs, from + 1000))
                    .mapToObj(i -> JobRequest.of(queue, new Nap(napMillis))).toList());
        }
    }

    private static void finish(AdaptivePrefetch prefetch, int jobs) {
        for (int i = 0; i < jobs; i++) {
            prefetch.finished();
        }
    }
}

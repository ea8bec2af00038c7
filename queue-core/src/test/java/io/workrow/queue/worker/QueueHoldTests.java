package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.QueueHold;
import io.workrow.queue.SnoozeJobException;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Holds: {@code SnoozeJobException.wholeQueue()} and {@code wholeKey()} (and an operator's
 * {@code QueueAdmin.hold}) stop the claims of a queue, or of one partition key, on every node until
 * the hold ends, without opening the breaker; the queue's other keys and other queues run on.
 */
class QueueHoldTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final JdbcQueueAdmin admin = new JdbcQueueAdmin(database.store());
    private final List<WorkerRuntime> runtimes = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();
    /** Each job's name, with the database's time its handler started. */
    private final Map<String, Instant> started = new ConcurrentHashMap<>();

    /** A call to a partner: {@code status} 429 answers "try again after {@code retryAfterMillis}". */
    record Call(String name, int status, long retryAfterMillis, String scope) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_hold");
    }

    @AfterEach
    void stop() {
        runtimes.forEach(WorkerRuntime::stop);
        pools.forEach(HikariDataSource::close);
    }

    private WorkerRuntime node(JobStore store, String queue, QueueOptions options) {
        WorkerRuntime runtime = WorkerRuntime.builder(store.dataSource()).store(store)
                .handler(queue, Call.class, (call, job) -> {
                    if (call.status() == 429 && job.attempt() == 1 && !started.containsKey(call.name() + "-429")) {
                        started.put(call.name() + "-429", databaseNow());
                        SnoozeJobException snooze = new SnoozeJobException(Duration.ofMillis(call.retryAfterMillis()));
                        throw "key".equals(call.scope()) ? snooze.wholeKey()
                                : "queue".equals(call.scope()) ? snooze.wholeQueue() : snooze;
                    }
                    started.put(call.name(), databaseNow());
                }, options)
                .build();
        runtimes.add(runtime);
        return runtime;
    }

    private JobStore otherNode() {
        JobStore node = database.otherNode(6);
        pools.add((HikariDataSource) node.dataSource());
        return node;
    }

    private static Instant databaseNow() {
        return database.jdbc().queryForObject("SELECT clock_timestamp()", Timestamp.class).toInstant();
    }

    private String status(long id) {
        return database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }

    @Test
    void aWholeQueueSnoozeStopsTheQueuesClaimsOnEveryNodeUntilItEnds() {
        WorkerRuntime first = node(database.store(), "partner", QueueOptions.defaults());
        WorkerRuntime second = node(otherNode(), "partner", QueueOptions.defaults());
        WorkerRuntime otherQueue = node(database.store(), "local", QueueOptions.defaults());
        first.start();
        second.start();
        otherQueue.start();
        jobQueue.enqueue("partner", new Call("limited", 429, 2_000, "queue"));
        await().atMost(Duration.ofSeconds(5)).until(() -> admin.holds().size() == 1);
        QueueHold hold = admin.holds().get(0);
        assertThat(hold.wholeQueue()).isTrue();
        assertThat(hold.reason()).isEqualTo("snoozed for PT2S with its whole queue");

        List<Long> behind = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            behind.add(jobQueue.enqueue("partner", new Call("behind-" + i, 200, 0, "")));
        }
        long local = jobQueue.enqueue("local", new Call("local", 200, 0, ""));

        await().atMost(Duration.ofSeconds(10)).until(() -> behind.stream().allMatch(id -> "completed".equals(status(id))));
        assertThat(status(local)).isEqualTo("completed");
        for (int i = 0; i < 20; i++) {
            assertThat(started.get("behind-" + i)).as("behind-%d started after the hold ended", i)
                    .isAfterOrEqualTo(hold.until());
        }
        assertThat(started.get("local")).as("another queue runs on").isBefore(hold.until());
        assertThat(admin.breakers()).as("no breaker was opened").isEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> "completed".equals(database.jdbc().queryForObject(
                "SELECT status FROM workrow_job WHERE payload ->> 'name' = 'limited'", String.class)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "ordered", "weighted"})
    void aWholeKeySnoozeHoldsOnlyThatKeysJobs(String kind) {
        QueueOptions options = switch (kind) {
            case "ordered" -> QueueOptions.defaults().withOrdering(KeyOrdering.SKIP);
            case "weighted" -> QueueOptions.defaults().withFairness(new FairnessOptions(FairnessMode.WEIGHTED, 60));
            default -> QueueOptions.defaults();
        };
        WorkerRuntime runtime = node(database.store(), "partner", options);
        long limited = jobQueue.enqueue(JobRequest.of("partner", new Call("a-first", 429, 60_000, "key"))
                .partitionKey("partner-a"));
        runtime.drain("partner");
        assertThat(status(limited)).isEqualTo("scheduled");
        long sameKey = jobQueue.enqueue(JobRequest.of("partner", new Call("a-second", 200, 0, "")).partitionKey("partner-a"));
        long otherKey = jobQueue.enqueue(JobRequest.of("partner", new Call("b", 200, 0, "")).partitionKey("partner-b"));
        long noKey = jobQueue.enqueue(JobRequest.of("partner", new Call("none", 200, 0, "")));

        List<DrainedJob> drained = runtime.drain("partner");
        // And on another node alike: the hold is in the database.
        WorkerRuntime elsewhere = node(otherNode(), "partner", options);
        List<DrainedJob> drainedElsewhere = elsewhere.drain("partner");

        assertThat(drained).extracting(DrainedJob::id).containsExactlyInAnyOrder(otherKey, noKey);
        assertThat(drainedElsewhere).isEmpty();
        assertThat(status(sameKey)).isEqualTo("pending");
        assertThat(admin.holds()).singleElement().satisfies(hold -> {
            assertThat(hold.partitionKey()).isEqualTo("partner-a");
            assertThat(hold.queue()).isEqualTo("partner");
        });

        assertThat(admin.releaseHold("partner", "partner-a")).isTrue();
        assertThat(runtime.drain("partner")).extracting(DrainedJob::id).containsExactly(sameKey);
        assertThat(admin.releaseHold("partner", "partner-a")).as("released already").isFalse();
    }

    @Test
    void aFairQueueWithManyHeldKeysStillRunsItsFreeOnes() {
        WorkerRuntime runtime = node(database.store(), "partner",
                QueueOptions.defaults().withFairness(new FairnessOptions(FairnessMode.WEIGHTED, 60)));
        for (int i = 0; i < 12; i++) {
            jobQueue.enqueue(JobRequest.of("partner", new Call("held-" + i, 200, 0, "")).partitionKey("tenant-" + i));
            admin.hold("partner", "tenant-" + i, Duration.ofMinutes(10), "tenant over its quota");
        }
        long free = jobQueue.enqueue(JobRequest.of("partner", new Call("free", 200, 0, "")).partitionKey("tenant-z"));

        // A drain claims one job at a time: a pool of eight candidates, as many held keys as that ahead.
        assertThat(runtime.drain("partner")).extracting(DrainedJob::id).containsExactly(free);
        assertThat(started).containsOnlyKeys("free");
    }

    @Test
    void jobsThisNodeClaimedAheadDoNotStartWhileItsHandlerHoldsTheQueue() {
        WorkerRuntime runtime = node(database.store(), "partner",
                QueueOptions.defaults().withConcurrency(1).withPrefetch(5));
        jobQueue.enqueue(JobRequest.of("partner", new Call("limited", 429, 1_500, "queue")).priority(-1));
        for (int i = 0; i < 4; i++) {
            jobQueue.enqueue("partner", new Call("in-line-" + i, 200, 0, ""));
        }
        runtime.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> started.size() == 6);
        Instant until = database.jdbc().queryForObject("SELECT until FROM workrow_hold", Timestamp.class).toInstant();
        for (int i = 0; i < 4; i++) {
            assertThat(started.get("in-line-" + i)).as("in-line-%d waited out the hold", i).isAfterOrEqualTo(until);
        }
        assertThat(started.get("limited-429")).isBefore(until);
    }

    @Test
    void anOperatorsHoldStopsClaimsAndItsReleaseWakesTheWorkersAtOnce() {
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .pollInterval(Duration.ofSeconds(30))
                .handler("partner", Call.class, (call, job) -> started.put(call.name(), databaseNow()),
                        QueueOptions.defaults())
                .build();
        runtimes.add(runtime);
        runtime.start();
        await().atMost(Duration.ofSeconds(10)).until(runtime::isListenerConnected);
        QueueHold hold = admin.hold("partner", null, Duration.ofHours(1), "partner maintenance");
        assertThat(hold.reason()).isEqualTo("held by hand: partner maintenance");
        assertThat(hold.heldBy()).isNull();

        long id = jobQueue.enqueue("partner", new Call("waits", 200, 0, ""));
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> "pending".equals(status(id)));

        assertThat(admin.releaseHold("partner", null)).isTrue();
        // The poller waits out a 30 s interval: only the release's notification wakes it.
        await().atMost(Duration.ofSeconds(5)).until(() -> "completed".equals(status(id)));
    }

    @Test
    void aShorterHoldNeverCutsALongerOneShortAndAKeylessJobSnoozesAlone() {
        QueueHold longer = admin.hold("partner", null, Duration.ofHours(1), "window");
        WorkerRuntime runtime = node(database.store(), "partner", QueueOptions.defaults());
        database.store().holds().hold("partner", null, Duration.ofSeconds(1), "shorter", "node-b");
        assertThat(admin.holds()).singleElement().satisfies(hold -> assertThat(hold.until()).isEqualTo(longer.until()));
        admin.releaseHold("partner", null);

        long keyless = jobQueue.enqueue("partner", new Call("keyless", 429, 60_000, "key"));
        runtime.drain("partner");

        assertThat(status(keyless)).isEqualTo("scheduled");
        assertThat(admin.holds()).as("no key to hold").isEmpty();
        assertThat(JobStatus.fromColumn(status(keyless))).isEqualTo(JobStatus.SCHEDULED);
    }
}

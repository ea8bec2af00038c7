package io.workrow.queue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.workrow.queue.DeadErrorGroup;
import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.JobDetail;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueStats;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.store.RecoveryRule;
import io.workrow.queue.testing.JobRows;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class JdbcQueueAdminTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JobStore store;
    private JobRows rows;
    private JdbcJobQueue jobQueue;
    private JdbcQueueAdmin admin;

    record Hook(String url) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        store = database.store();
        rows = database.rows();
        jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        admin = new JdbcQueueAdmin(store);
    }

    /** Enqueues a job on {@code queue} and kills it with {@code error}; claims every pending job of the queue. */
    private long deadJob(String queue, String error) {
        long id = jobQueue.enqueue(queue, new Hook("https://example.com"));
        ClaimedPosition claimed = claim(queue, 10).stream().filter(job -> job.id() == id).findFirst().orElseThrow();
        assertThat(end(PositionEnd.discarded(claimed, error)).counted()).isTrue();
        return id;
    }

    private List<ClaimedPosition> claim(String queue, int limit) {
        return store.claims().claim(queue, "w", limit, Duration.ofMinutes(1), false);
    }

    private EndResult end(PositionEnd end) {
        return store.claims().endMany(List.of(end)).get(end);
    }

    private Instant databaseNow() {
        return database.jdbc().queryForObject("SELECT now()", Timestamp.class).toInstant();
    }

    @Test
    void statsCountEachQueuesOpenWorkAndListIdlePausedAndDeclaredQueues() {
        deadJob("webhooks", "HTTP 500");
        jobQueue.enqueue("webhooks", new Hook("a"));
        jobQueue.enqueue("webhooks", new Hook("b"));
        jobQueue.enqueue(JobRequest.of("webhooks", new Hook("later")).delay(Duration.ofHours(1)));
        jobQueue.enqueue("emails", new Hook("c"));
        jobQueue.enqueue("emails", new Hook("d"));
        rows.makeQueueDue("emails", Duration.ofSeconds(90));
        claim("emails", 1);
        // History is not read: a queue with only completed jobs is not listed.
        rows.insertFinished("archive", "completed", 3, null, databaseNow());
        admin.pause("reports", "month end");
        store.queueRules().declare("w", List.of(new RecoveryRule("thumbnails", 1000, 2.0, 60_000, 0.1, 0)));

        List<QueueStats> stats = admin.stats();

        assertThat(stats).extracting(QueueStats::queue).containsExactly("emails", "reports", "thumbnails", "webhooks");
        assertThat(stats.get(0)).extracting(QueueStats::pending, QueueStats::due, QueueStats::running,
                QueueStats::scheduled, QueueStats::dead, QueueStats::paused).containsExactly(1L, 1L, 1L, 0L, 0L, false);
        assertThat(stats.get(0).oldestDueAge()).isGreaterThanOrEqualTo(Duration.ofSeconds(89));
        assertThat(stats.get(1)).isEqualTo(new QueueStats("reports", 0, 0, 0, 0, 0, Duration.ZERO, true));
        assertThat(stats.get(2)).isEqualTo(new QueueStats("thumbnails", 0, 0, 0, 0, 0, Duration.ZERO, false));
        assertThat(stats.get(3)).extracting(QueueStats::pending, QueueStats::due, QueueStats::running,
                QueueStats::scheduled, QueueStats::dead, QueueStats::paused).containsExactly(2L, 2L, 0L, 1L, 1L, false);
    }

    @Test
    void deadGroupsAreCountedAmongTheNewestDeadJobsOnly() {
        // An old kind, then a sample's worth of newer jobs of another kind, in one queue; one more in another.
        Instant anHourAgo = databaseNow().minus(Duration.ofHours(1));
        rows.insertFinished("webhooks", "dead", 3, "java.lang.IllegalStateException: old", anHourAgo);
        rows.insertFinished("webhooks", "dead", QueueAdmin.DEAD_GROUP_SAMPLE, "HTTP 503", anHourAgo.plusMillis(3));
        deadJob("emails", "HTTP 500");

        List<DeadErrorGroup> groups = admin.deadErrorGroups(null, 10);
        assertThat(groups).extracting(DeadErrorGroup::queue, DeadErrorGroup::error, DeadErrorGroup::jobs)
                .as("the old kind is listed, though none of its jobs is among the newest")
                .containsExactly(tuple("webhooks", "HTTP 503", 9_999L), tuple("emails", "HTTP 500", 1L),
                        tuple("webhooks", "java.lang.IllegalStateException", 0L));
        assertThat(groups.get(2).newestIds()).hasSize(3);
        assertThat(groups.get(2).example()).isEqualTo("java.lang.IllegalStateException: old");
        assertThat(admin.deadErrorGroups("webhooks", 10)).extracting(DeadErrorGroup::error, DeadErrorGroup::jobs)
                .containsExactly(tuple("HTTP 503", (long) QueueAdmin.DEAD_GROUP_SAMPLE),
                        tuple("java.lang.IllegalStateException", 0L));
        assertThat(admin.retryDeadGroup("webhooks", "java.lang.IllegalStateException"))
                .as("the old kind is still retried whole").isEqualTo(3);
        assertThat(admin.deadErrorGroups("webhooks", 10)).extracting(DeadErrorGroup::error, DeadErrorGroup::jobs)
                .containsExactly(tuple("HTTP 503", (long) QueueAdmin.DEAD_GROUP_SAMPLE));
    }

    @Test
    void theNewestDeadJobsAreSampledAcrossQueuesNotTheFirstQueuesInNameOrder() {
        // A sample's worth of old deaths in a queue named first, five new ones in a queue named last.
        Instant twoHoursAgo = databaseNow().minus(Duration.ofHours(2));
        rows.insertFinished("alpha", "dead", QueueAdmin.DEAD_GROUP_SAMPLE, "HTTP 502", twoHoursAgo);
        rows.insertFinished("zulu", "dead", 5, "HTTP 504", twoHoursAgo.plus(Duration.ofHours(1)));

        assertThat(admin.deadErrorGroups(null, 10)).extracting(DeadErrorGroup::queue, DeadErrorGroup::jobs)
                .containsExactly(tuple("alpha", (long) QueueAdmin.DEAD_GROUP_SAMPLE - 5), tuple("zulu", 5L));
    }

    @Test
    void deadJobsAreSearchableByErrorText() {
        long timeout = deadJob("webhooks", "java.net.SocketTimeoutException: Read timed out");
        deadJob("webhooks", "HTTP 410 Gone");
        deadJob("emails", "Read Timed Out again");

        assertThat(admin.deadJobs("webhooks", "timed out", 10)).extracting(JobSummary::id).containsExactly(timeout);
        assertThat(admin.deadJobs(null, "TIMED OUT", 10)).hasSize(2);
        assertThat(admin.deadJobs(null, null, 10)).hasSize(3)
                .allSatisfy(job -> assertThat(job.status()).isEqualTo(JobStatus.DEAD));
    }

    @Test
    void deadJobsAreGroupedByQueueAndKindOfErrorLargestGroupFirst() {
        long olderTimeout = deadJob("webhooks", "java.net.SocketTimeoutException: Read timed out after 10s");
        long newestTimeout = deadJob("webhooks", "java.net.SocketTimeoutException: Read timed out after 30s");
        long gone = deadJob("webhooks", "HTTP 410 Gone");
        deadJob("emails", "java.net.SocketTimeoutException: connect timed out");
        rows.setFinishedAt(olderTimeout, database.jdbc().queryForObject(
                "SELECT finished_at FROM workrow_job WHERE id = ?", Timestamp.class, olderTimeout).toInstant()
                .minusSeconds(1));

        List<DeadErrorGroup> groups = admin.deadErrorGroups(null, 10);

        assertThat(groups).extracting(DeadErrorGroup::queue, DeadErrorGroup::error, DeadErrorGroup::jobs)
                .containsExactly(
                        tuple("webhooks", "java.net.SocketTimeoutException", 2L),
                        tuple("emails", "java.net.SocketTimeoutException", 1L),
                        tuple("webhooks", "HTTP 410 Gone", 1L));
        DeadErrorGroup timeouts = groups.get(0);
        assertThat(timeouts.newestIds()).hasSize(2).first().isEqualTo(newestTimeout);
        assertThat(timeouts.example()).isEqualTo("java.net.SocketTimeoutException: Read timed out after 30s");
        assertThat(admin.deadErrorGroups("webhooks", 1)).singleElement()
                .extracting(DeadErrorGroup::error).isEqualTo("java.net.SocketTimeoutException");
        assertThat(admin.deadErrorGroups("webhooks", 10)).last().extracting(DeadErrorGroup::newestIds)
                .isEqualTo(List.of(gone));

        assertThat(admin.retryDeadGroup("webhooks", timeouts.error())).as("the group retried by its kind").isEqualTo(2);
        assertThat(admin.deadErrorGroups(null, 10)).extracting(DeadErrorGroup::jobs).containsExactly(1L, 1L);
    }

    @Test
    void aGroupLargerThanOneStatementsBatchIsRetriedAndCancelledWhole() {
        // Two and a half batches of one kind in each of two queues, and one job of another kind.
        for (String queue : List.of("webhooks", "emails")) {
            rows.insertFinished(queue, "dead", 12_500, "java.net.ConnectException: refused",
                    databaseNow().minus(Duration.ofMinutes(1)));
        }
        long other = deadJob("webhooks", "java.lang.IllegalStateException: other kind");

        assertThat(admin.retryDeadGroup("webhooks", "java.net.ConnectException")).isEqualTo(12_500);
        assertThat(admin.cancelDeadGroup("emails", "java.net.ConnectException")).isEqualTo(12_500);
        assertThat(database.jdbc().queryForList("SELECT queue || ' ' || status || ' ' || count(*) FROM workrow_job"
                + " GROUP BY queue, status ORDER BY 1", String.class))
                .containsExactly("emails cancelled 12500", "webhooks dead 1", "webhooks pending 12500");
        assertThat(statuses()).containsEntry(other, "dead");
    }

    @Test
    void aGroupRetriesExactlyItsOwnKindNeitherALongerNameNorJobsWithoutAnError() {
        long state = deadJob("webhooks", "java.lang.IllegalState: short name");
        long longer = deadJob("webhooks", "java.lang.IllegalStateException: longer name");
        long noError = deadJob("webhooks", null);
        long elsewhere = deadJob("emails", "java.lang.IllegalState: same kind, other queue");

        assertThat(admin.deadErrorGroups("webhooks", 10)).extracting(DeadErrorGroup::error, DeadErrorGroup::example)
                .containsExactlyInAnyOrder(tuple("java.lang.IllegalState", "java.lang.IllegalState: short name"),
                        tuple("java.lang.IllegalStateException", "java.lang.IllegalStateException: longer name"),
                        tuple("", null));

        assertThat(admin.retryDeadGroup("webhooks", "java.lang.IllegalState")).isEqualTo(1);
        assertThat(statuses()).as("a kind whose name starts with the group's stays").containsEntry(state, "pending")
                .containsEntry(longer, "dead").containsEntry(elsewhere, "dead");
        assertThat(admin.retryDeadGroup("webhooks", "")).as("the group without an error, alone").isEqualTo(1);
        assertThat(statuses()).containsEntry(noError, "pending").containsEntry(longer, "dead");
    }

    @Test
    void leaseExpiriesAreOneKindWhicheverWorkerHeldTheJob() {
        deadJob("webhooks", "lease expired while held by host-a:101:1f2e");
        deadJob("webhooks", "lease expired 3 times; last held by host-b:202:9c8d");

        assertThat(admin.deadErrorGroups("webhooks", 10)).singleElement().satisfies(group -> {
            assertThat(group.error()).isEqualTo("lease expired");
            assertThat(group.jobs()).isEqualTo(2);
        });
        assertThat(admin.retryDeadGroup("webhooks", "lease expired")).isEqualTo(2);
    }

    @Test
    void aGroupListsItsNewestFiveIdsAndGroupsOfEqualSizeGoNewestFirst() {
        List<Long> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 7; i++) {
            ids.add(deadJob("webhooks", "java.io.IOException: attempt " + i));
        }
        long older = deadJob("emails", "HTTP 500");
        long newer = deadJob("emails", "HTTP 502");
        for (int i = 0; i < ids.size(); i++) {
            setFinishedAt(ids.get(i), "2026-01-01T00:00:0" + i + "Z");
        }
        setFinishedAt(older, "2026-01-01T00:01:00Z");
        setFinishedAt(newer, "2026-01-01T00:02:00Z");

        List<DeadErrorGroup> groups = admin.deadErrorGroups(null, 10);

        assertThat(groups).extracting(DeadErrorGroup::error).containsExactly("java.io.IOException", "HTTP 502",
                "HTTP 500");
        assertThat(groups.get(0).newestIds()).containsExactly(ids.get(6), ids.get(5), ids.get(4), ids.get(3),
                ids.get(2));
        assertThat(groups.get(0).example()).isEqualTo("java.io.IOException: attempt 6");
        assertThat(groups.get(0).lastDiedAt()).isEqualTo(Instant.parse("2026-01-01T00:00:06Z"));
        assertThat(admin.deadErrorGroups(null, 2)).extracting(DeadErrorGroup::error)
                .containsExactly("java.io.IOException", "HTTP 502");
    }

    @Test
    void cancellingDeadJobsTakesThemOffTheDeadListByIdOrByExactKindInTheirQueueOnly() {
        long timeout = deadJob("webhooks", "java.net.SocketTimeoutException: read");
        long otherTimeout = deadJob("webhooks", "java.net.SocketTimeoutException: connect");
        long longer = deadJob("webhooks", "java.net.SocketTimeoutExceptionX: not the same kind");
        long elsewhere = deadJob("emails", "java.net.SocketTimeoutException: read");
        long pending = jobQueue.enqueue("webhooks", new Hook("https://example.com/pending"));

        Timestamp diedAt = database.jdbc().queryForObject("SELECT finished_at FROM workrow_job WHERE id = ?",
                Timestamp.class, timeout);

        assertThat(admin.cancelDead("webhooks", List.of(elsewhere, pending))).as("other queue, not dead").isZero();
        assertThat(admin.cancelDead("webhooks", List.of(timeout))).isEqualTo(1);
        assertThat(database.jdbc().queryForObject("SELECT finished_at FROM workrow_job WHERE id = ?", Timestamp.class,
                timeout)).as("retention still counts from its death").isEqualTo(diedAt);
        assertThat(statuses()).containsEntry(timeout, "cancelled");
        assertThat(admin.cancelDeadGroup("webhooks", "java.net.SocketTimeoutException")).isEqualTo(1);

        assertThat(statuses()).containsEntry(otherTimeout, "cancelled").containsEntry(longer, "dead")
                .containsEntry(elsewhere, "dead").containsEntry(pending, "pending");
        assertThat(admin.deadErrorGroups("webhooks", 10)).extracting(DeadErrorGroup::error)
                .containsExactly("java.net.SocketTimeoutExceptionX");
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class,
                timeout)).as("kept for the record").isEqualTo("java.net.SocketTimeoutException: read");
        assertThat(admin.retryDead("webhooks", List.of(timeout))).as("a cancelled job is not retried").isZero();
    }

    private void setFinishedAt(long id, String instant) {
        rows.setFinishedAt(id, Instant.parse(instant));
    }

    @Test
    void oneJobsWholeRowWithItsPayloadWhichCanBeWithheld() {
        long id = jobQueue.enqueue(JobRequest.of("webhooks", new Hook("https://example.com/a"))
                .partitionKey("customer:7").idempotencyKey("hook-a").priority(3));
        store.claims().claim("webhooks", "worker-1", 1, Duration.ofMinutes(1), false);

        JobDetail job = admin.job(id).orElseThrow();

        assertThat(job.queue()).isEqualTo("webhooks");
        assertThat(job.status()).isEqualTo(JobStatus.RUNNING);
        assertThat(job.partitionKey()).isEqualTo("customer:7");
        assertThat(job.fairnessKey()).as("the partition key, unless set").isEqualTo("customer:7");
        assertThat(job.idempotencyKey()).isEqualTo("hook-a");
        assertThat(job.priority()).isEqualTo(3);
        assertThat(job.payload()).isEqualTo("{\"url\": \"https://example.com/a\"}");
        assertThat(job.headers()).startsWith("{");
        assertThat(job.attempts()).isEqualTo(1);
        assertThat(job.claimedBy()).isEqualTo("worker-1");
        assertThat(job.leaseExpiresAt()).isAfter(job.startedAt());
        assertThat(job.createdAt()).isNotNull();
        assertThat(job.finishedAt()).isNull();
        assertThat(job.updatedAt()).as("when the claim changed it").isNotNull().isAfterOrEqualTo(job.createdAt());
        JobDetail withheld = job.withoutPayload();
        assertThat(withheld.payload()).isNull();
        assertThat(withheld.headers()).isNull();
        assertThat(withheld).usingRecursiveComparison().ignoringFields("payload", "headers").isEqualTo(job);
        assertThat(admin.job(id + 1_000)).isEmpty();
    }

    @Test
    void finishedJobsAreCountedPerQueueAndMinuteInsideTheWindow() {
        deadJob("webhooks", "HTTP 500");
        for (String url : List.of("a", "b", "c")) {
            long id = jobQueue.enqueue("webhooks", new Hook(url));
            ClaimedPosition claimed = claim("webhooks", 10).stream().filter(job -> job.id() == id).findFirst()
                    .orElseThrow();
            assertThat(end(PositionEnd.completed(claimed)).counted()).isTrue();
        }
        deadJob("emails", "HTTP 500");
        // Fixed times, so that a minute ending during the test moves no job to another bucket.
        Instant thisMinute = database.jdbc().queryForObject("SELECT date_trunc('minute', now())", Timestamp.class)
                .toInstant();
        rows.setFinishedAtOfQueue("webhooks", thisMinute);
        rows.setFinishedAtOfQueue("emails", thisMinute.minus(Duration.ofMinutes(5)));

        assertThat(admin.finishedPerMinute(thisMinute.minus(Duration.ofMinutes(59)))).extracting(
                FinishedPerMinute::queue, FinishedPerMinute::minute, FinishedPerMinute::completed,
                FinishedPerMinute::dead).containsExactly(
                        tuple("emails", thisMinute.minus(Duration.ofMinutes(5)), 0L, 1L),
                        tuple("webhooks", thisMinute, 3L, 1L));
        assertThat(admin.finishedPerMinute(thisMinute.minus(Duration.ofSeconds(4 * 60 - 1))))
                .as("from the start of the minute of since: this one and the four before")
                .extracting(FinishedPerMinute::queue).containsExactly("webhooks");
        assertThat(admin.finishedPerMinute(thisMinute.minus(Duration.ofMinutes(5)))).hasSize(2);
        rows.setFinishedAtOfQueue("emails", databaseNow().minus(Duration.ofHours(25)));
        assertThat(admin.finishedPerMinute(Instant.EPOCH)).as("never more than a day back")
                .extracting(FinishedPerMinute::queue).containsExactly("webhooks");
    }

    @Test
    void retryByErrorTextMovesExactlyTheMatchingDeadJobs() {
        long first = deadJob("webhooks", "HTTP 503 Service Unavailable");
        long second = deadJob("webhooks", "HTTP 503 Service Unavailable");
        long other = deadJob("webhooks", "HTTP 400 Bad Request");
        long elsewhere = deadJob("emails", "HTTP 503 Service Unavailable");

        assertThat(admin.retryDead("webhooks", "503")).isEqualTo(2);

        Map<Long, String> status = statuses();
        assertThat(status).containsEntry(first, "pending").containsEntry(second, "pending")
                .containsEntry(other, "dead").containsEntry(elsewhere, "dead");
        assertThat(database.jdbc().queryForObject("SELECT attempts FROM workrow_job WHERE id = ?", Integer.class, first))
                .isZero();
    }

    @Test
    void retryByIdMovesOnlyDeadJobsOfTheNamedQueue() {
        long dead = deadJob("webhooks", "boom");
        long deadElsewhere = deadJob("emails", "boom");
        long pending = jobQueue.enqueue("webhooks", new Hook("x"));
        assertThat(admin.retryDead("webhooks", List.of(dead, pending, deadElsewhere))).isEqualTo(1);
        assertThat(statuses()).containsEntry(dead, "pending").containsEntry(pending, "pending")
                .containsEntry(deadElsewhere, "dead");
    }

    @Test
    void cancellingARunningJobFencesOutItsResult() {
        long id = jobQueue.enqueue("webhooks", new Hook("x"));
        ClaimedPosition claimed = claim("webhooks", 1).get(0);
        assertThat(admin.runningJobs("webhooks", 10)).extracting(JobSummary::claimedBy).containsExactly("w");

        assertThat(admin.cancel("emails", id)).as("another queue's path").isFalse();
        assertThat(statuses()).containsEntry(id, "running");
        assertThat(admin.cancel("webhooks", id)).isTrue();
        assertThat(end(PositionEnd.completed(claimed)).counted()).as("the result of a cancelled job").isFalse();
        assertThat(statuses()).containsEntry(id, "cancelled");
        assertThat(admin.cancel("webhooks", id)).as("already finished").isFalse();
    }

    private Map<Long, String> statuses() {
        Map<Long, String> statuses = new java.util.HashMap<>();
        database.jdbc().query("SELECT id, status FROM workrow_job",
                (org.springframework.jdbc.core.RowCallbackHandler) rs -> statuses.put(rs.getLong(1), rs.getString(2)));
        return statuses;
    }
}

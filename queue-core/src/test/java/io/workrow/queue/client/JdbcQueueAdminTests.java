package io.workrow.queue.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.JobStatus;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueStats;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobFailure;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class JdbcQueueAdminTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private JobStore store;
    private JdbcJobQueue jobQueue;
    private JdbcQueueAdmin admin;

    record Hook(String url) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        store = database.store();
        jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
        admin = new JdbcQueueAdmin(store);
    }

    /** Enqueues a job on {@code queue} and kills it with {@code error}; claims every pending job of the queue. */
    private long deadJob(String queue, String error) {
        long id = jobQueue.enqueue(queue, new Hook("https://example.com"));
        ClaimedJob claimed = store.claim(queue, "w", 10, Duration.ofMinutes(1)).stream()
                .filter(job -> job.id() == id).findFirst().orElseThrow();
        store.failMany(List.of(new JobFailure(id, claimed.leaseToken(), error, Duration.ZERO, true)));
        return id;
    }

    @Test
    void statsCountEachQueueByStatus() {
        deadJob("webhooks", "HTTP 500");
        jobQueue.enqueue("webhooks", new Hook("a"));
        jobQueue.enqueue("webhooks", new Hook("b"));
        jobQueue.enqueue("emails", new Hook("c"));
        database.jdbc().update("UPDATE workrow_job SET run_at = now() - interval '90 seconds' WHERE queue = 'emails'");

        List<QueueStats> stats = admin.stats();

        assertThat(stats).extracting(QueueStats::queue).containsExactly("emails", "webhooks");
        QueueStats webhooks = stats.get(1);
        assertThat(webhooks.pending()).isEqualTo(2);
        assertThat(webhooks.dead()).isEqualTo(1);
        assertThat(stats.get(0).oldestDueAge()).isGreaterThanOrEqualTo(Duration.ofSeconds(89));
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
        ClaimedJob claimed = store.claim("webhooks", "w", 1, Duration.ofMinutes(1)).get(0);
        assertThat(admin.runningJobs("webhooks", 10)).extracting(JobSummary::claimedBy).containsExactly("w");

        assertThat(admin.cancel("emails", id)).as("another queue's path").isFalse();
        assertThat(statuses()).containsEntry(id, "running");
        assertThat(admin.cancel("webhooks", id)).isTrue();
        assertThat(store.completeMany(List.of(new HeldJob(id, claimed.leaseToken())))).isEmpty();
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

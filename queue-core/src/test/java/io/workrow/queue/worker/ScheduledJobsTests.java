package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ScheduledJobsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Reminder(String text) {
    }

    @Test
    void aJobForLaterWaitsScheduledOutsideTheClaimIndexAndRunsOnceDue() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        long later = jobQueue.enqueue(JobRequest.of("remind", new Reminder("later")).delay(Duration.ofMillis(1500)));
        long now = jobQueue.enqueue("remind", new Reminder("now"));
        assertThat(status(later)).isEqualTo("scheduled");
        assertThat(status(now)).isEqualTo("pending");

        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .pollInterval(Duration.ofMillis(200))
                .handler("remind", Reminder.class, (reminder, job) -> { }, QueueOptions.defaults())
                .build();
        runtime.start();
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> "completed".equals(status(now)));
            assertThat(status(later)).isEqualTo("scheduled");
            await().atMost(Duration.ofSeconds(5)).until(() -> "completed".equals(status(later)));
            Map<String, Object> row = database.jdbc().queryForMap(
                    "SELECT started_at >= run_at AS on_time, started_at - run_at < interval '1 second' AS promptly"
                    + " FROM workrow_job WHERE id = ?", later);
            assertThat(row).containsEntry("on_time", true).containsEntry("promptly", true);
        } finally {
            runtime.stop();
        }
    }

    private String status(long id) {
        return database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }
}

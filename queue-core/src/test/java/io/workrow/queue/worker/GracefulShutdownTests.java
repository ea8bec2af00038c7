package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GracefulShutdownTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Nap(long millis) {
    }

    @Test
    void handlersThatFinishInTimeCompleteAndTheRestAreReleasedAtOnce() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        List<Long> quick = List.of(jobQueue.enqueue("nap", new Nap(300)), jobQueue.enqueue("nap", new Nap(300)));
        List<Long> stuck = List.of(jobQueue.enqueue("nap", new Nap(60_000)), jobQueue.enqueue("nap", new Nap(60_000)));
        AtomicInteger started = new AtomicInteger();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .shutdownTimeout(Duration.ofSeconds(2))
                .handler("nap", Nap.class, (nap, job) -> {
                    started.incrementAndGet();
                    Thread.sleep(nap.millis());
                }, QueueOptions.defaults().withConcurrency(4).withLease(Duration.ofMinutes(10)))
                .build();
        runtime.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> started.get() == 4);

        long stopStarted = System.nanoTime();
        runtime.stop();
        Duration stopTook = Duration.ofNanos(System.nanoTime() - stopStarted);

        assertThat(stopTook).isLessThan(Duration.ofSeconds(10));
        for (long id : quick) {
            assertThat(row(id).get("status")).isEqualTo("completed");
        }
        for (long id : stuck) {
            Map<String, Object> row = row(id);
            assertThat(row.get("status")).isEqualTo("pending");
            assertThat(row.get("claimed_by")).isNull();
            assertThat(row.get("lease_token")).isNull();
            assertThat(row.get("lease_expires_at")).isNull();
            assertThat(row.get("attempts")).as("the interrupted attempt is given back").isEqualTo(0);
            assertThat(row.get("last_error")).isNull();
        }
        assertThat(runtime.inFlightCount()).isZero();
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }
}

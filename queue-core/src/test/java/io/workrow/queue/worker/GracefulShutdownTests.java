package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GracefulShutdownTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Nap(long millis) {
    }

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @Test
    void handlersThatFinishInTimeCompleteAndInterruptedOnesGoBackKeepingTheirAttempt() {
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
            assertThat(row.get("attempts")).as("an interrupted attempt counts, so a job that always outlives"
                    + " shutdown still retires").isEqualTo(1);
            assertThat((String) row.get("last_error")).startsWith("interrupted by shutdown of " + runtime.workerId());
        }
        assertThat(runtime.inFlightCount()).isZero();
    }

    @Test
    void aHandlerThatIgnoresTheInterruptKeepsItsJobAndItsLeaseThenRunsOutAfterStop() throws Exception {
        long id = jobQueue.enqueue("stubborn", new Nap(0));
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        AtomicReference<Thread> handlerThread = new AtomicReference<>();
        WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource())
                .shutdownTimeout(Duration.ofMillis(1500))
                .handler("stubborn", Nap.class, (nap, job) -> {
                    handlerThread.set(Thread.currentThread());
                    running.countDown();
                    // Blocking I/O that ignores interrupts, as a JDBC call or a socket read can.
                    while (letGo.getCount() > 0) {
                        try {
                            letGo.await();
                        } catch (InterruptedException ignored) {
                            // keeps going
                        }
                    }
                }, QueueOptions.defaults().withLease(Duration.ofSeconds(3)))
                .build();
        runtime.start();
        assertThat(running.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

        runtime.stop(); // 1.5 s to finish, then interrupted and 1.5 s more: it still runs

        assertThat(handlerThread.get().isAlive()).isTrue();
        Map<String, Object> afterStop = row(id);
        assertThat(afterStop.get("status")).as("never handed back while its handler runs").isEqualTo("running");
        assertThat(afterStop.get("claimed_by")).isEqualTo(runtime.workerId());
        assertThat(database.jdbc().queryForObject("SELECT lease_expires_at > now() FROM workrow_job WHERE id = ?",
                Boolean.class, id)).as("renewed during the 3 s of shutdown, past its first 3 s lease").isTrue();

        // No longer renewed after stop: the lease runs out and the sweeper could hand the job on.
        await().atMost(Duration.ofSeconds(6)).until(() -> database.jdbc().queryForObject(
                "SELECT lease_expires_at < now() FROM workrow_job WHERE id = ?", Boolean.class, id));
        letGo.countDown();
        await().atMost(Duration.ofSeconds(5)).until(() -> !handlerThread.get().isAlive());
        assertThat(row(id).get("status")).as("its late success is not written by a stopped runtime")
                .isEqualTo("running");
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }
}

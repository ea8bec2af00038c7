package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Wake-ups by LISTEN/NOTIFY, with a poll interval long enough that polling cannot explain them. */
class InsertListenerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final Duration POLL_INTERVAL = Duration.ofSeconds(30);
    private static final Duration WELL_BEFORE_THE_POLL = Duration.ofSeconds(5);

    private final Set<Long> handled = ConcurrentHashMap.newKeySet();
    private JdbcJobQueue jobQueue;
    private WorkerRuntime runtime;

    record Ping(String text) {
    }

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        runtime = WorkerRuntime.builder(database.dataSource())
                .pollInterval(POLL_INTERVAL)
                .handler("ping", Ping.class, (ping, job) -> handled.add(job.id()), QueueOptions.defaults())
                .build();
        runtime.start();
        await().atMost(Duration.ofSeconds(10)).until(runtime::isListenerConnected);
    }

    @AfterEach
    void tearDown() {
        runtime.stop();
    }

    private List<Integer> listenerBackends() {
        return database.jdbc().queryForList("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                + " AND query LIKE 'LISTEN %'", Integer.class);
    }

    private void assertPickedUpPromptly(long id) {
        await().atMost(WELL_BEFORE_THE_POLL).until(() -> handled.contains(id));
    }

    @Test
    void idleRuntimePicksUpANewJobWellBeforeItsPollInterval() {
        assertPickedUpPromptly(jobQueue.enqueue("ping", new Ping("first")));
        // The poller is idle now, waiting out its 30 s interval: only a notification wakes it.
        assertPickedUpPromptly(jobQueue.enqueue("ping", new Ping("second")));
        assertPickedUpPromptly(jobQueue.enqueue("ping", new Ping("third")));
    }

    @Test
    void wakeUpsResumeAfterTheListenerConnectionIsKilled() {
        assertPickedUpPromptly(jobQueue.enqueue("ping", new Ping("before")));
        List<Integer> before = listenerBackends();
        assertThat(before).hasSize(1);

        database.jdbc().queryForList("SELECT pg_terminate_backend(?)", Boolean.class, before.get(0));

        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<Integer> now = listenerBackends();
            return now.size() == 1 && !now.equals(before) && runtime.isListenerConnected();
        });
        assertPickedUpPromptly(jobQueue.enqueue("ping", new Ping("after")));
        assertPickedUpPromptly(jobQueue.enqueue("ping", new Ping("after again")));
    }
}

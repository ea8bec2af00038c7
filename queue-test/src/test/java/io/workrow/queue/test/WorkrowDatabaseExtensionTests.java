package io.workrow.queue.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.worker.DrainedJob;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.WorkerRuntime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit without Spring: a migrated database for the class, a runtime on it, and the tester. */
class WorkrowDatabaseExtensionTests {

    @RegisterExtension
    static final WorkrowDatabaseExtension database = new WorkrowDatabaseExtension();

    record Ping(int n) {
    }

    @Test
    void aPlainRuntimeOnTheClassesDatabaseDrainsThroughTheTester() {
        StringBuilder pinged = new StringBuilder();
        try (WorkerRuntime runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("ping", Ping.class, (ping, job) -> pinged.append(ping.n()), QueueOptions.defaults())
                .build()) {
            WorkrowTester workrow = new WorkrowTester(database.dataSource(), database.store().schema(),
                    JacksonPayloadCodec.withDefaultMapper(), Map.of("ping", Ping.class)::get, () -> runtime);
            JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
            jobQueue.enqueue("ping", new Ping(1));
            jobQueue.enqueue("ping", new Ping(2));

            workrow.assertEnqueued(JobExpectation.on("ping").payload(new Ping(2)));
            List<DrainedJob> runs = workrow.drain("ping");

            assertThat(runs).hasSize(2).allMatch(DrainedJob::succeeded);
            assertThat(pinged).hasToString("12");
            assertThat(database.jdbc().queryForObject("SELECT current_database()", String.class))
                    .startsWith("workrow_test_workrowdatabaseextensiontests_");
        }
    }
}

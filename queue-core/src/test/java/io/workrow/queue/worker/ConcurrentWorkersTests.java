package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ConcurrentWorkersTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    record Work(int n) {
    }

    @Test
    void tenThousandJobsRunExactlyOnceAcrossFourRuntimes() {
        int jobs = 10_000;
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            requests.add(JobRequest.of("work", new Work(i)));
        }
        for (int from = 0; from < jobs; from += 1000) {
            jobQueue.enqueueAll(requests.subList(from, from + 1000));
        }

        Map<Long, AtomicInteger> runsPerJob = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> runsPerPayload = new ConcurrentHashMap<>();
        List<WorkerRuntime> runtimes = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            runtimes.add(WorkerRuntime.builder(database.dataSource())
                    .pollInterval(Duration.ofMillis(200))
                    .handler("work", Work.class, (work, job) -> {
                        runsPerJob.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                        runsPerPayload.computeIfAbsent(work.n(), n -> new AtomicInteger()).incrementAndGet();
                    }, QueueOptions.defaults().withConcurrency(8))
                    .build());
        }
        runtimes.forEach(WorkerRuntime::start);
        try {
            await().atMost(Duration.ofSeconds(120)).until(() -> database.jdbc().queryForObject(
                    "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == jobs);
        } finally {
            runtimes.forEach(WorkerRuntime::stop);
        }

        assertThat(runsPerJob).hasSize(jobs);
        assertThat(runsPerJob.values()).allSatisfy(runs -> assertThat(runs.get()).isEqualTo(1));
        assertThat(runsPerPayload).hasSize(jobs);
        assertThat(runsPerPayload.values()).allSatisfy(runs -> assertThat(runs.get()).isEqualTo(1));
        Map<String, Object> summary = database.jdbc().queryForMap("""
                SELECT count(*) FILTER (WHERE status = 'completed') AS completed,
                       count(*) FILTER (WHERE status IN ('pending', 'running')) AS open,
                       max(attempts) AS max_attempts,
                       count(DISTINCT claimed_by) AS workers
                FROM workrow_job""");
        assertThat(((Number) summary.get("completed")).intValue()).isEqualTo(jobs);
        assertThat(((Number) summary.get("open")).intValue()).isZero();
        assertThat(((Number) summary.get("max_attempts")).intValue()).isEqualTo(1);
        assertThat(((Number) summary.get("workers")).intValue()).as("runtimes that claimed jobs").isGreaterThan(1);
    }
}

package io.workrow.queue.test;

import io.workrow.queue.JobStatus;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.worker.DrainedJob;
import io.workrow.queue.worker.WorkerRuntime;
import java.lang.reflect.Type;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A test's view of Workrow: what was enqueued, and the queue's jobs run on demand. In a
 * {@link WorkrowTest} it is a bean to autowire:
 *
 * <pre>{@code
 * @Autowired WorkrowTester workrow;
 *
 * orders.place("ada", 1200);
 * workrow.assertEnqueued(JobExpectation.on("send-receipt").payload(new ReceiptRequest(1)));
 * List<DrainedJob> runs = workrow.drain("send-receipt");   // the real handler, in this thread
 * }</pre>
 *
 * Its queries run on the application's {@code DataSource} through Spring's {@code JdbcTemplate},
 * so inside a test's transaction they see what the test enqueued before it commits (or rolls back).
 */
public final class WorkrowTester {

    private final JdbcTemplate jdbc;
    private final String enqueuedSql;
    private final PayloadCodec codec;
    private final Function<String, Type> handlerPayloadTypes;
    private final Supplier<WorkerRuntime> runtime;

    /**
     * @param dataSource the application's, on which jobs are enqueued
     * @param handlerPayloadTypes the payload type of each queue's handler, {@code null} for a queue without one
     * @param runtime the runtime, not started, that drains run on
     */
    public WorkrowTester(DataSource dataSource, SqlIdentifier schema, PayloadCodec codec,
            Function<String, Type> handlerPayloadTypes, Supplier<WorkerRuntime> runtime) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.enqueuedSql = """
                SELECT job.id, job.queue, job.status, job.payload::text AS payload, job.partition_key,
                       job.idempotency_key, job.fairness_key, job.run_at, job.priority, job.max_attempts,
                       data.after_ids, data.after_settled_ids
                  FROM %1$s.workrow_job AS job
                  JOIN %1$s.workrow_job_data AS data ON data.id = job.id
                 WHERE job.queue = ? AND job.status IN ('pending', 'scheduled', 'waiting')
                 ORDER BY job.id
                """.formatted(schema.quoted());
        this.codec = codec;
        this.handlerPayloadTypes = handlerPayloadTypes;
        this.runtime = runtime;
    }

    private static List<Long> ids(java.sql.ResultSet row, String column) throws java.sql.SQLException {
        java.sql.Array ids = row.getArray(column);
        return ids == null ? List.of() : List.of((Long[]) ids.getArray());
    }

    /** The jobs waiting in {@code queue} (due now or later, or waiting for other jobs), oldest first. */
    public List<EnqueuedJob> enqueued(String queue) {
        Type payloadType = handlerPayloadTypes.apply(queue);
        return jdbc.query(enqueuedSql, (row, n) -> new EnqueuedJob(row.getLong("id"), row.getString("queue"),
                JobStatus.fromColumn(row.getString("status")), row.getString("payload"),
                row.getString("partition_key"), row.getString("idempotency_key"),
                emptyAsNull(row.getString("fairness_key")), row.getTimestamp("run_at").toInstant(),
                row.getInt("priority"), row.getInt("max_attempts"), payloadType, codec, ids(row, "after_ids"),
                ids(row, "after_settled_ids")), queue);
    }

    /**
     * Asserts that exactly one waiting job meets {@code expected}, and returns it.
     *
     * @throws AssertionError naming the jobs that are there and how each differs
     */
    public EnqueuedJob assertEnqueued(JobExpectation expected) {
        List<EnqueuedJob> jobs = enqueued(expected.queue());
        List<EnqueuedJob> matching = jobs.stream().filter(expected::matches).toList();
        if (matching.size() == 1) {
            return matching.get(0);
        }
        if (matching.isEmpty()) {
            throw new AssertionError("Expected " + expected + " to be enqueued, but " + describe(jobs, expected));
        }
        throw new AssertionError("Expected exactly one job enqueued as " + expected + ", but " + matching.size()
                + " are:" + list(matching));
    }

    /** Asserts that no waiting job meets {@code expected}. */
    public void assertNotEnqueued(JobExpectation expected) {
        List<EnqueuedJob> matching = enqueued(expected.queue()).stream().filter(expected::matches).toList();
        if (!matching.isEmpty()) {
            throw new AssertionError("Expected no job enqueued as " + expected + ", but found:" + list(matching));
        }
    }

    /**
     * Runs {@code queue}'s due jobs in this thread through the queue's real handler and returns
     * each run with its recorded outcome; see {@link WorkerRuntime#drain(String)}. It refuses to run
     * inside a transaction, whose uncommitted jobs it could not finish.
     */
    public List<DrainedJob> drain(String queue) {
        return runtime.get().drain(queue);
    }

    /**
     * Drains {@code queues} in turn, again and again, until none of them has a due job: jobs that
     * wait for others ({@code JobRequest.after}) and batch callbacks released by the runs, in any
     * of these queues, run in the same call. Returns every run in the order it ran.
     *
     * @throws IllegalStateException after {@value #MOST_PASSES} passes that each ran something
     */
    public List<DrainedJob> drain(String... queues) {
        List<DrainedJob> runs = new java.util.ArrayList<>();
        for (int pass = 0; pass < MOST_PASSES; pass++) {
            int before = runs.size();
            for (String queue : queues) {
                runs.addAll(runtime.get().drain(queue));
            }
            if (runs.size() == before) {
                return runs;
            }
        }
        throw new IllegalStateException("drain(" + String.join(", ", queues) + ") still found due jobs after "
                + MOST_PASSES + " passes: handlers that keep enqueueing into these queues");
    }

    /** How many times {@link #drain(String...)} goes over its queues before it gives up. */
    static final int MOST_PASSES = 100;

    private static String describe(List<EnqueuedJob> jobs, JobExpectation expected) {
        if (jobs.isEmpty()) {
            return "no job waits on '" + expected.queue() + "'";
        }
        return jobs.size() + " job(s) wait there, none of them that:" + jobs.stream()
                .map(job -> "\n  " + job + "\n    " + String.join("\n    ", expected.mismatches(job)))
                .collect(Collectors.joining());
    }

    private static String list(List<EnqueuedJob> jobs) {
        return jobs.stream().map(job -> "\n  " + job).collect(Collectors.joining());
    }

    private static String emptyAsNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }
}

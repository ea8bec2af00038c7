package io.workrow.queue.test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * What a test expects of an enqueued job: its queue, and any of its payload, keys, due time and
 * priority. What is not set is not checked.
 *
 * <pre>{@code
 * workrow.assertEnqueued(JobExpectation.on("send-receipt")
 *         .payload(new ReceiptRequest(order.id()))
 *         .partitionKey("order:" + order.id())
 *         .idempotencyKey("receipt-" + order.id()));
 * }</pre>
 */
public final class JobExpectation {

    private static final Duration MICROSECOND = Duration.ofNanos(1_000);

    private final String queue;
    private final List<Check> checks = new ArrayList<>();

    private JobExpectation(String queue) {
        this.queue = Objects.requireNonNull(queue, "queue");
    }

    /** A job on {@code queue}. */
    public static JobExpectation on(String queue) {
        return new JobExpectation(queue);
    }

    /**
     * A payload equal to {@code expected} once read as the queue's handler's payload type (as
     * {@code expected}'s class when no handler here takes the queue).
     */
    public JobExpectation payload(Object expected) {
        return check("payload " + expected, job -> {
            Object actual = job.handlerPayloadType() != null ? job.payload() : job.payloadAs(expected.getClass());
            return Objects.equals(expected, actual) ? null : "its payload is " + actual;
        });
    }

    /** A payload, read as {@code type}, that {@code matcher} accepts; {@code description} names what it looks for. */
    public <T> JobExpectation payload(Class<T> type, String description, Predicate<? super T> matcher) {
        return check("payload " + description, job -> {
            T actual = job.payloadAs(type);
            return matcher.test(actual) ? null : "its payload is " + actual;
        });
    }

    public JobExpectation partitionKey(String expected) {
        return check("partition key '" + expected + "'", job -> Objects.equals(expected, job.partitionKey()) ? null
                : "its partition key is " + quoted(job.partitionKey()));
    }

    public JobExpectation idempotencyKey(String expected) {
        return check("idempotency key '" + expected + "'", job -> Objects.equals(expected, job.idempotencyKey())
                ? null : "its idempotency key is " + quoted(job.idempotencyKey()));
    }

    public JobExpectation fairnessKey(String expected) {
        return check("fairness key '" + expected + "'", job -> Objects.equals(expected, job.fairnessKey()) ? null
                : "its fairness key is " + quoted(job.fairnessKey()));
    }

    /** Due at {@code expected}, to the microsecond (the database keeps no finer time and rounds to it). */
    public JobExpectation runAt(Instant expected) {
        return check("run at " + expected, job ->
                Duration.between(expected, job.runAt()).abs().compareTo(MICROSECOND) < 0 ? null
                        : "it runs at " + job.runAt());
    }

    /** Due within {@code tolerance} of {@code expected}: for jobs enqueued with a delay from the database's now. */
    public JobExpectation runAt(Instant expected, Duration tolerance) {
        return check("run at " + expected + " ± " + tolerance, job ->
                Duration.between(expected, job.runAt()).abs().compareTo(tolerance) <= 0 ? null
                        : "it runs at " + job.runAt());
    }

    /** Waiting for other jobs to end ({@code WAITING}), not yet claimable. */
    public JobExpectation waiting() {
        return check("status waiting", job -> job.status() == io.workrow.queue.JobStatus.WAITING ? null
                : "it is " + job.status().columnValue());
    }

    /** Enqueued to wait for these jobs to complete ({@code JobRequest.after}), exactly these, in this order. */
    public JobExpectation after(long... ids) {
        List<Long> expected = java.util.Arrays.stream(ids).boxed().toList();
        return check("after " + expected, job -> expected.equals(job.after()) ? null
                : "it waits for " + (job.after().isEmpty() ? "no job" : job.after().toString()));
    }

    /** Enqueued to wait for these jobs to end, however ({@code JobRequest.afterSettled}), exactly these, in this order. */
    public JobExpectation afterSettled(long... ids) {
        List<Long> expected = java.util.Arrays.stream(ids).boxed().toList();
        return check("afterSettled " + expected, job -> expected.equals(job.afterSettled()) ? null
                : "it waits for " + (job.afterSettled().isEmpty() ? "no job to end" : job.afterSettled() + " to end"));
    }

    public JobExpectation priority(int expected) {
        return check("priority " + expected, job -> job.priority() == expected ? null
                : "its priority is " + job.priority());
    }

    public String queue() {
        return queue;
    }

    /** Why {@code job} does not meet this expectation: one line per failed check; empty when it does. */
    public List<String> mismatches(EnqueuedJob job) {
        List<String> mismatches = new ArrayList<>();
        if (!queue.equals(job.queue())) {
            mismatches.add("it is on '" + job.queue() + "'");
        }
        for (Check check : checks) {
            String mismatch;
            try {
                mismatch = check.mismatch().of(job);
            } catch (AssertionError e) {
                mismatch = e.getMessage();
            }
            if (mismatch != null) {
                mismatches.add("expected " + check.description() + ", but " + mismatch);
            }
        }
        return mismatches;
    }

    public boolean matches(EnqueuedJob job) {
        return mismatches(job).isEmpty();
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("a job on '").append(queue).append('\'');
        for (int i = 0; i < checks.size(); i++) {
            text.append(i == 0 ? " with " : ", ").append(checks.get(i).description());
        }
        return text.toString();
    }

    private JobExpectation check(String description, Mismatch mismatch) {
        checks.add(new Check(description, mismatch));
        return this;
    }

    private static String quoted(String value) {
        return value == null ? "not set" : "'" + value + "'";
    }

    @FunctionalInterface
    private interface Mismatch {

        /** What differs, or {@code null} when the job passes. */
        String of(EnqueuedJob job);
    }

    private record Check(String description, Mismatch mismatch) {
    }
}

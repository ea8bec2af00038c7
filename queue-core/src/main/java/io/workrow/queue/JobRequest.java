package io.workrow.queue;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What to enqueue: a queue, a payload and optional routing and scheduling. Immutable; each
 * method returns a new request.
 *
 * <pre>{@code
 * JobRequest.of("send-receipt", new ReceiptRequest(9182))
 *         .partitionKey("order:9182").idempotencyKey("receipt-9182-v1")
 *         .delay(Duration.ofMinutes(5)).priority(0).maxAttempts(5);
 * }</pre>
 */
public final class JobRequest {

    private final String queue;
    private final Object payload;
    private final String partitionKey;
    private final String idempotencyKey;
    private final Instant runAt;
    private final Duration delay;
    private final int priority;
    private final Integer maxAttempts;
    private final String fairnessKey;
    private final List<Long> after;
    /** The longest handler timeout a job may ask for: a year. */
    public static final Duration MAX_TIMEOUT = Duration.ofDays(365);
    /** The latest deadline the database stores (its timestamps end in year 9999). */
    public static final Instant LATEST_DEADLINE = Instant.parse("9999-12-31T23:59:59Z");

    private final List<Long> afterSettled;
    private final Instant expiresAt;
    private final Duration timeout;
    private final KeyScope keyScope;
    private final boolean replaceWaiting;

    private JobRequest(String queue, Object payload, String partitionKey, String idempotencyKey,
            Instant runAt, Duration delay, int priority, Integer maxAttempts, String fairnessKey, List<Long> after,
            List<Long> afterSettled, Instant expiresAt, Duration timeout, KeyScope keyScope, boolean replaceWaiting) {
        this.queue = queue;
        this.payload = payload;
        this.partitionKey = partitionKey;
        this.idempotencyKey = idempotencyKey;
        this.runAt = runAt;
        this.delay = delay;
        this.priority = priority;
        this.maxAttempts = maxAttempts;
        this.fairnessKey = fairnessKey;
        this.after = after;
        this.afterSettled = afterSettled;
        this.expiresAt = expiresAt;
        this.timeout = timeout;
        this.keyScope = keyScope;
        this.replaceWaiting = replaceWaiting;
    }

    /** A request to run {@code payload} on {@code queue} as soon as a worker is free. */
    public static JobRequest of(String queue, Object payload) {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(payload, "payload");
        return new JobRequest(queue, payload, null, null, null, null, 0, null, null, List.of(), List.of(), null, null,
                KeyScope.WHILE_RETAINED, false);
    }

    /** Groups related jobs (e.g. {@code order:9182}); also decides the job's partition bucket. */
    public JobRequest partitionKey(String partitionKey) {
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    /**
     * At most one job per key and queue exists while its history is kept
     * ({@link KeyScope#WHILE_RETAINED}); enqueueing the key again returns the first job's id.
     */
    public JobRequest idempotencyKey(String idempotencyKey) {
        return idempotencyKey(idempotencyKey, KeyScope.WHILE_RETAINED);
    }

    /**
     * At most one job per key and queue within {@code scope}: enqueueing the key again returns the
     * id of the job that has it while that job is within the scope (not started, not ended, or
     * kept), and otherwise makes a new job, which takes the key over.
     */
    public JobRequest idempotencyKey(String idempotencyKey, KeyScope scope) {
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, Objects.requireNonNull(scope, "scope"), replaceWaiting);
    }

    /** Runs no earlier than {@code runAt}. Replaces any {@link #delay(Duration)}. */
    public JobRequest runAt(Instant runAt) {
        return new JobRequest(queue, payload, partitionKey, idempotencyKey,
                Objects.requireNonNull(runAt, "runAt"), null, priority, maxAttempts, fairnessKey, after, afterSettled,
                expiresAt, timeout, keyScope, replaceWaiting);
    }

    /**
     * Runs no earlier than {@code delay} after the enqueue, measured by the database's clock.
     * Replaces any {@link #runAt(Instant)}.
     */
    public JobRequest delay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, was " + delay);
        }
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, null, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    /** Lower runs first; default 0. Between -32768 and 32767. */
    public JobRequest priority(int priority) {
        if (priority < Short.MIN_VALUE || priority > Short.MAX_VALUE) {
            throw new IllegalArgumentException("priority must be between " + Short.MIN_VALUE + " and "
                    + Short.MAX_VALUE + ", was " + priority);
        }
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    /** How many attempts the job gets before it is dead; defaults to the queue's setting. */
    public JobRequest maxAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    /**
     * The key a fair queue ({@code workrow.queues.<name>.fairness}) shares its work by, for example
     * the tenant; without one, the partition key is used. Not blank.
     */
    public JobRequest fairnessKey(String fairnessKey) {
        if (fairnessKey == null || fairnessKey.isBlank()) {
            throw new IllegalArgumentException("fairnessKey must not be blank");
        }
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    /**
     * Runs only after every job in {@code ids} has completed; if one of them ends dead or
     * cancelled instead, this job is cancelled, with a last error naming it (and so on down the
     * jobs that wait for this one). Until then the job is {@code waiting}: not claimable, costing
     * claims nothing, released by the end of its last dependency in that end's own transaction. A
     * job already completed counts as met; an id that does not exist fails the enqueue. Adds to the
     * jobs named before. The dependencies are registered when the enqueue's transaction commits.
     */
    public JobRequest after(long... ids) {
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, joined(after, ids), afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    /**
     * Runs only after every job in {@code ids} has ended, however it ended (completed, dead or
     * cancelled). Otherwise as {@link #after(long...)}; a job named in both waits as for
     * {@code after}.
     */
    public JobRequest afterSettled(long... ids) {
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, joined(afterSettled, ids), expiresAt, timeout, keyScope, replaceWaiting);
    }

    /**
     * A deadline: no attempt of the job starts at or after {@code expiresAt} (by the database's
     * clock, judged with the claim's own timing so that a job waiting in a runtime's line is never
     * started late). A job that reaches a worker past it is cancelled unstarted, its last error
     * "expired: ...", and jobs that wait for it through {@link #after(long...)} are cancelled with it.
     * A retry's attempt counts too: a job failing past its deadline is not tried again.
     */
    public JobRequest expiresAt(Instant expiresAt) {
        if (Objects.requireNonNull(expiresAt, "expiresAt").isAfter(LATEST_DEADLINE)) {
            throw new IllegalArgumentException("expiresAt must be no later than " + LATEST_DEADLINE + ", was "
                    + expiresAt);
        }
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, Objects.requireNonNull(expiresAt, "expiresAt"), timeout, keyScope, replaceWaiting);
    }

    /**
     * This job's handler timeout, in place of its queue's {@code timeout}: a handler running longer
     * is interrupted and its attempt fails. Positive.
     */
    public JobRequest timeout(Duration timeout) {
        if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("timeout must be between 1 ms and " + MAX_TIMEOUT + ", was " + timeout);
        }
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, replaceWaiting);
    }

    private static List<Long> joined(List<Long> listed, long... ids) {
        if (ids == null || ids.length == 0) {
            throw new IllegalArgumentException("name at least one job to wait for");
        }
        Long[] all = Arrays.copyOf(listed.toArray(new Long[0]), listed.size() + ids.length);
        for (int i = 0; i < ids.length; i++) {
            all[listed.size() + i] = ids[i];
        }
        return List.of(all);
    }

    public String queue() {
        return queue;
    }

    public Object payload() {
        return payload;
    }

    /** The partition key, or {@code null}. */
    public String partitionKey() {
        return partitionKey;
    }

    /** The idempotency key, or {@code null}. */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** The absolute due time, or {@code null}. */
    public Instant runAt() {
        return runAt;
    }

    /** The delay from enqueue, or {@code null}. */
    public Duration delay() {
        return delay;
    }

    public int priority() {
        return priority;
    }

    /** The attempts requested for this job, or {@code null} for the queue's default. */
    public Integer maxAttempts() {
        return maxAttempts;
    }

    /** The fairness key set for this job, or {@code null} for its partition key. */
    public String fairnessKey() {
        return fairnessKey;
    }

    /** The jobs this one waits to complete ({@link #after(long...)}), in the order named; empty for none. */
    public List<Long> after() {
        return after;
    }

    /** The jobs this one waits to end ({@link #afterSettled(long...)}), in the order named; empty for none. */
    public List<Long> afterSettled() {
        return afterSettled;
    }

    /**
     * Debounce: when a job of this request's idempotency key has not started yet (pending,
     * scheduled, or waiting for other jobs), the enqueue replaces that job's payload, headers and
     * due time and returns its id, instead of leaving the first request's. When the key's job has
     * started, the enqueue makes a new job, which takes the key over (as
     * {@link KeyScope#WHILE_WAITING}): the latest request always runs after the latest enqueue.
     * Needs an idempotency key.
     */
    public JobRequest replaceWaiting() {
        return new JobRequest(queue, payload, partitionKey, idempotencyKey, runAt, delay, priority, maxAttempts,
                fairnessKey, after, afterSettled, expiresAt, timeout, keyScope, true);
    }

    /** Whether the enqueue replaces the key's waiting job ({@link #replaceWaiting()}). */
    public boolean replacesWaiting() {
        return replaceWaiting;
    }

    /** How long the idempotency key holds ({@link #idempotencyKey(String, KeyScope)}). */
    public KeyScope keyScope() {
        return keyScope;
    }

    /** The deadline ({@link #expiresAt(Instant)}), or {@code null} for none. */
    public Instant expiresAt() {
        return expiresAt;
    }

    /** This job's own handler timeout ({@link #timeout(Duration)}), or {@code null} for its queue's. */
    public Duration timeout() {
        return timeout;
    }

    @Override
    public String toString() {
        // Never the payload: it may hold personal data.
        return "JobRequest[queue=" + queue + ", partitionKey=" + partitionKey + ", idempotencyKey="
                + idempotencyKey + (keyScope == KeyScope.WHILE_RETAINED ? "" : " " + keyScope)
                + (fairnessKey == null ? "" : ", fairnessKey=" + fairnessKey)
                + (after.isEmpty() ? "" : ", after=" + after)
                + (afterSettled.isEmpty() ? "" : ", afterSettled=" + afterSettled)
                + (expiresAt == null ? "" : ", expiresAt=" + expiresAt) + (timeout == null ? "" : ", timeout=" + timeout)
                + "]";
    }
}

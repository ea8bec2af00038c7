package io.workrow.queue.test;

import io.workrow.queue.JobStatus;
import io.workrow.queue.payload.PayloadCodec;
import java.lang.reflect.Type;
import java.time.Instant;
import java.util.List;

/**
 * A job waiting in a queue ({@code pending}, {@code scheduled} for later, or {@code waiting} for
 * other jobs), as a test sees it: its row's routing and timing, the jobs it waits for, and its
 * payload read as the queue's handler reads it.
 */
public final class EnqueuedJob {

    private final long id;
    private final String queue;
    private final JobStatus status;
    private final String payloadJson;
    private final String partitionKey;
    private final String idempotencyKey;
    private final String fairnessKey;
    private final Instant runAt;
    private final int priority;
    private final int maxAttempts;
    private final Type handlerPayloadType;
    private final PayloadCodec codec;
    private final List<Long> after;
    private final List<Long> afterSettled;

    EnqueuedJob(long id, String queue, JobStatus status, String payloadJson, String partitionKey,
            String idempotencyKey, String fairnessKey, Instant runAt, int priority, int maxAttempts,
            Type handlerPayloadType, PayloadCodec codec, List<Long> after, List<Long> afterSettled) {
        this.after = after;
        this.afterSettled = afterSettled;
        this.id = id;
        this.queue = queue;
        this.status = status;
        this.payloadJson = payloadJson;
        this.partitionKey = partitionKey;
        this.idempotencyKey = idempotencyKey;
        this.fairnessKey = fairnessKey;
        this.runAt = runAt;
        this.priority = priority;
        this.maxAttempts = maxAttempts;
        this.handlerPayloadType = handlerPayloadType;
        this.codec = codec;
    }

    public long id() {
        return id;
    }

    public String queue() {
        return queue;
    }

    /** {@code PENDING} when due, {@code SCHEDULED} when due later, {@code WAITING} while it waits for other jobs. */
    public JobStatus status() {
        return status;
    }

    /** The jobs it was enqueued to wait for ({@code JobRequest.after}), in the order named; empty for none. */
    public List<Long> after() {
        return after;
    }

    /** The jobs it was enqueued to wait for however they end ({@code afterSettled}); empty for none. */
    public List<Long> afterSettled() {
        return afterSettled;
    }

    /** The payload as stored. */
    public String payloadJson() {
        return payloadJson;
    }

    /**
     * The payload read as the payload type of the queue's handler in this application.
     *
     * @throws AssertionError when no handler here takes the queue, or the payload cannot be read as its type
     */
    public Object payload() {
        if (handlerPayloadType == null) {
            throw new AssertionError("No handler in this application takes queue '" + queue + "', so " + this
                    + " has no payload type to be read as; use payloadAs(type)");
        }
        return read(handlerPayloadType);
    }

    /**
     * The payload read as {@code type}.
     *
     * @throws AssertionError when it cannot be read as {@code type}
     */
    @SuppressWarnings("unchecked")
    public <T> T payloadAs(Class<T> type) {
        return (T) read(type);
    }

    /** The type the queue's handler reads payloads as, or {@code null} when no handler here takes the queue. */
    public Type handlerPayloadType() {
        return handlerPayloadType;
    }

    public String partitionKey() {
        return partitionKey;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** The key a fair queue shares its starts by: the one enqueued with, else the partition key. */
    public String fairnessKey() {
        return fairnessKey;
    }

    /** When the job is due, to the microsecond the database keeps. */
    public Instant runAt() {
        return runAt;
    }

    public int priority() {
        return priority;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    private Object read(Type type) {
        try {
            return codec.decode(payloadJson, type);
        } catch (RuntimeException e) {
            throw new AssertionError("The payload of " + this + " cannot be read as " + type.getTypeName() + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("job ").append(id).append(" on '").append(queue).append("' (")
                .append(status.columnValue()).append(", run at ").append(runAt).append(", payload ")
                .append(payloadJson);
        if (partitionKey != null) {
            text.append(", partition key '").append(partitionKey).append('\'');
        }
        if (idempotencyKey != null) {
            text.append(", idempotency key '").append(idempotencyKey).append('\'');
        }
        if (fairnessKey != null && !fairnessKey.equals(partitionKey)) {
            text.append(", fairness key '").append(fairnessKey).append('\'');
        }
        return text.append(", priority ").append(priority).append(')').toString();
    }
}

package io.workrow.queue;

import java.time.Instant;

/**
 * One job's whole row, as an operator inspects it. The payload, headers and saved step may hold
 * personal data: {@link #withoutPayload()} drops them before the job is shown where payloads may
 * not be, and {@link #toString()} never prints them.
 *
 * @param fairnessKey the key a fair queue shares its starts by (the partition key unless set), or null
 * @param payload the payload's JSON, or null when withheld
 * @param headers the headers' JSON (trace context, payload type), or null when withheld
 * @param step what the handler last saved with {@code JobContext.saveStep}, or null (also when withheld)
 * @param claimedBy the worker that holds it (running) or last held it
 */
public record JobDetail(long id, String queue, JobStatus status, String partitionKey, String fairnessKey,
        String idempotencyKey, int priority, String payload, String headers, Instant runAt, int attempts,
        int maxAttempts, int leaseExpiries, String lastError, Instant lastErrorAt, String step, String claimedBy,
        Instant leaseExpiresAt, Instant createdAt, Instant startedAt, Instant finishedAt, Instant updatedAt) {

    /** The same job with its payload, headers and saved step withheld. */
    public JobDetail withoutPayload() {
        return new JobDetail(id, queue, status, partitionKey, fairnessKey, idempotencyKey, priority, null, null,
                runAt, attempts, maxAttempts, leaseExpiries, lastError, lastErrorAt, null, claimedBy, leaseExpiresAt,
                createdAt, startedAt, finishedAt, updatedAt);
    }

    /** The job's identity and state, never its payload, headers or step (logs outlive their readers). */
    @Override
    public String toString() {
        return "JobDetail[id=" + id + ", queue=" + queue + ", status=" + status + ", attempts=" + attempts + "/"
                + maxAttempts + ", runAt=" + runAt + ", claimedBy=" + claimedBy + ", lastError=" + lastError + "]";
    }
}

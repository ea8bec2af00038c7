package io.workrow.queue;

import java.time.Instant;

/**
 * One job's whole row, as an operator inspects it. The payload and headers may hold personal
 * data: {@link #withoutPayload()} drops them before the job is shown where payloads may not be.
 *
 * @param fairnessKey the key a fair queue shares its starts by (the partition key unless set), or null
 * @param payload the payload's JSON, or null when withheld
 * @param headers the headers' JSON (trace context, payload type), or null when withheld
 * @param step what the handler last saved with {@code JobContext.saveStep}, or null
 * @param claimedBy the worker that holds it (running) or last held it
 */
public record JobDetail(long id, String queue, JobStatus status, String partitionKey, String fairnessKey,
        String idempotencyKey, int priority, String payload, String headers, Instant runAt, int attempts,
        int maxAttempts, int leaseExpiries, String lastError, Instant lastErrorAt, String step, String claimedBy,
        Instant leaseExpiresAt, Instant createdAt, Instant startedAt, Instant finishedAt, Instant updatedAt) {

    /** The same job with its payload and headers withheld. */
    public JobDetail withoutPayload() {
        return new JobDetail(id, queue, status, partitionKey, fairnessKey, idempotencyKey, priority, null, null,
                runAt, attempts, maxAttempts, leaseExpiries, lastError, lastErrorAt, step, claimedBy, leaseExpiresAt,
                createdAt, startedAt, finishedAt, updatedAt);
    }
}

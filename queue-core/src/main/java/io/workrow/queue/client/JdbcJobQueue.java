package io.workrow.queue.client;

import io.workrow.queue.JobBatch;
import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.metrics.EnqueueHeaders;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.NewJob;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToIntFunction;

/**
 * {@link JobQueue} on {@link JobStore}: validates and encodes requests, then inserts them in one
 * statement on the application's {@code DataSource}, inside the caller's transaction if any.
 */
public final class JdbcJobQueue implements JobQueue {

    /** Attempts a job gets when neither the request nor the queue's settings say. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;

    /** Largest encoded payload accepted by default: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

    private static final String NO_HEADERS = "{}";

    private final JobStore store;
    private final PayloadCodec codec;
    private final ToIntFunction<String> maxAttemptsOfQueue;
    private final int maxPayloadBytes;
    private final EnqueueHeaders headers;

    /**
     * @param maxAttemptsOfQueue the default attempts for a queue, used when a request sets none
     * @param maxPayloadBytes the largest encoded payload accepted, in UTF-8 bytes
     */
    public JdbcJobQueue(JobStore store, PayloadCodec codec, ToIntFunction<String> maxAttemptsOfQueue,
            int maxPayloadBytes) {
        this(store, codec, maxAttemptsOfQueue, maxPayloadBytes, EnqueueHeaders.NONE);
    }

    private JdbcJobQueue(JobStore store, PayloadCodec codec, ToIntFunction<String> maxAttemptsOfQueue,
            int maxPayloadBytes, EnqueueHeaders headers) {
        this.store = store;
        this.codec = codec;
        this.maxAttemptsOfQueue = maxAttemptsOfQueue;
        this.maxPayloadBytes = maxPayloadBytes;
        this.headers = headers;
    }

    /** This producer, writing {@code headers} (the trace context) into every job it enqueues. */
    public JdbcJobQueue withHeaders(EnqueueHeaders headers) {
        return new JdbcJobQueue(store, codec, maxAttemptsOfQueue, maxPayloadBytes, headers);
    }

    /** A producer with the default attempts and payload limit. */
    public JdbcJobQueue(JobStore store, PayloadCodec codec) {
        this(store, codec, queue -> DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_PAYLOAD_BYTES);
    }

    @Override
    public long enqueue(JobRequest request) {
        return store.insertOne(toNewJob(request, headersJson(1)));
    }

    @Override
    public List<Long> enqueueAll(List<JobRequest> requests) {
        List<NewJob> jobs = new ArrayList<>(requests.size());
        String headersJson = headersJson(requests.size());
        for (JobRequest request : requests) {
            jobs.add(toNewJob(request, headersJson));
        }
        return store.insertMany(jobs);
    }

    @Override
    public JobBatch batch() {
        return new JdbcJobBatch(store, request -> toNewJob(request, headersJson(1)));
    }

    @Override
    public <T> Optional<T> result(long id, Class<T> type) {
        return store.resultJson(id).map(json -> type.cast(codec.decode(json, type)));
    }

    private String headersJson(int jobs) {
        Map<String, String> captured = headers.capture(jobs);
        return captured.isEmpty() ? NO_HEADERS : codec.encode(captured);
    }

    private NewJob toNewJob(JobRequest request, String headersJson) {
        String queue = QueueNames.check(request.queue());
        String payload = codec.encode(request.payload());
        // Bytes are only counted when the text could be over the limit (a char is at most 3 bytes).
        if (payload.length() * 3L > maxPayloadBytes) {
            int bytes = payload.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > maxPayloadBytes) {
                throw new IllegalArgumentException("Payload for queue '" + queue + "' is " + bytes
                        + " bytes as JSON, over the limit of " + maxPayloadBytes
                        + " (workrow.max-payload-size); store large data elsewhere and enqueue a reference");
            }
        }
        if (request.expiresAt() != null && request.runAt() != null && !request.expiresAt().isAfter(request.runAt())) {
            throw new IllegalArgumentException("Job for queue '" + queue + "' expires at " + request.expiresAt()
                    + ", not after its runAt " + request.runAt() + ": it could never start");
        }
        if (request.replacesWaiting() && request.idempotencyKey() == null) {
            throw new IllegalArgumentException("replaceWaiting() on queue '" + queue + "' needs an idempotency key:"
                    + " it replaces the waiting job of that key");
        }
        if (request.replacesWaiting() && (!request.after().isEmpty() || !request.afterSettled().isEmpty())) {
            throw new IllegalArgumentException("replaceWaiting() on queue '" + queue + "' cannot wait for other jobs:"
                    + " a replacement changes the payload and due time of the key's job, not what it waits for");
        }
        int maxAttempts = request.maxAttempts() != null
                ? request.maxAttempts() : maxAttemptsOfQueue.applyAsInt(queue);
        long delayMillis = request.delay() == null ? 0 : request.delay().toMillis();
        return new NewJob(queue, request.partitionKey(), PartitionBuckets.of(request.partitionKey()),
                request.priority(), request.idempotencyKey(), payload, headersJson, request.runAt(),
                delayMillis, maxAttempts, request.fairnessKey(), request.after(), request.afterSettled(),
                request.expiresAt(), request.timeout() == null ? null : request.timeout().toMillis(),
                request.keyScope(), request.replacesWaiting());
    }
}

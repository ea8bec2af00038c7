package io.workrow.queue;

import java.util.List;
import java.util.Optional;

/**
 * Puts jobs on queues. Enqueue runs on the application's {@code DataSource} and joins the caller's
 * Spring-managed transaction when there is one, so a job enqueued with a business write exists if
 * and only if that write commits.
 */
public interface JobQueue {

    /** Enqueues {@code payload} on {@code queue} with the queue's defaults; returns the job id. */
    default long enqueue(String queue, Object payload) {
        return enqueue(JobRequest.of(queue, payload));
    }

    /**
     * Enqueues one job and returns its id. When the request's idempotency key already exists for
     * its queue, nothing is inserted and the existing job's id is returned.
     */
    long enqueue(JobRequest request);

    /**
     * Enqueues many jobs in one round trip and returns their ids in request order, with the same
     * idempotency rule as {@link #enqueue(JobRequest)}.
     */
    List<Long> enqueueAll(List<JobRequest> requests);

    /**
     * The result the job's handler returned ({@link JobFunction}), read as {@code type}; empty
     * while the job has not completed, when its handler returned nothing, or once its history is
     * past retention. Runs on the application's {@code DataSource}, in the caller's transaction
     * when there is one.
     *
     * @throws io.workrow.queue.payload.PayloadDecodingException when the stored result is not a
     *     valid {@code type}
     */
    <T> Optional<T> result(long id, Class<T> type);

    /**
     * Starts a batch: members and callbacks that run once when every member has ended
     * ({@link JobBatch}). Nothing is written until its {@code enqueue()}.
     */
    JobBatch batch();
}

package io.workrow.queue;

/**
 * Runs the jobs of one queue. Returning normally completes the job; throwing fails the attempt
 * (retried with backoff while attempts remain); throwing {@link DiscardJobException} sends the
 * job to {@code dead} at once.
 *
 * <p>Delivery is at least once: a job may run again after a crash or a lost lease, so effects
 * outside the database should use {@link JobContext#idempotencyKey()}.
 *
 * @param <T> the payload type, read from the stored JSON
 */
@FunctionalInterface
public interface JobHandler<T> {

    void handle(T payload, JobContext context) throws Exception;
}

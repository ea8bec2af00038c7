package io.workrow.queue;

/**
 * Runs the jobs of one queue and returns each job's result. The returned value is stored as JSON
 * with the job's completion, in the same statement (or, for a transactional handler, in the same
 * transaction), kept as long as the job's history is retained, and read back with
 * {@link JobQueue#result(long, Class)}. Returning {@code null} stores no result. A result larger
 * than the configured limit ({@code workrow.max-result-size}) or one that cannot be written as JSON
 * sends the job to {@code dead} with the reason: the same run would return the same value again.
 * Results are never logged.
 *
 * <p>Everything else is as for {@link JobHandler}: throwing fails the attempt, {@link
 * DiscardJobException} sends the job to {@code dead}, and delivery is at least once.
 *
 * @param <T> the payload type, read from the stored JSON
 * @param <R> the result type, written as JSON
 */
@FunctionalInterface
public interface JobFunction<T, R> {

    R apply(T payload, JobContext context) throws Exception;

    /** A handler as a function with no result. */
    static <T> JobFunction<T, Void> of(JobHandler<T> handler) {
        return (payload, context) -> {
            handler.handle(payload, context);
            return null;
        };
    }
}

package io.workrow.queue.worker;

/**
 * Runs a transactional handler's work (the handler, then the job's fenced completion) in one
 * transaction on the same {@code DataSource} as the job table, so both commit or neither does.
 * The Spring Boot starter supplies one built on the application's transaction manager.
 */
@FunctionalInterface
public interface HandlerTransaction {

    /** Runs {@code work} in a new transaction, committing if it returns and rolling back if it throws. */
    void execute(Work work) throws Exception;

    /** The handler and its completion. */
    @FunctionalInterface
    interface Work {
        void run() throws Exception;
    }
}

package io.workrow.queue.worker;

import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** A transactional handler's transaction on a plain {@code DataSource}, as Spring's would run it. */
final class LocalTransactions {

    private LocalTransactions() {
    }

    /** Runs the handler and its completion in a new local transaction on {@code dataSource}. */
    static HandlerTransaction on(DataSource dataSource) {
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        return work -> transactions.executeWithoutResult(status -> {
            try {
                work.run();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }
}

package io.workrow.queue.store;

import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs a statement with PostgreSQL's generic plan for its prepared form. The claims are long
 * statements whose plan takes about a millisecond to make (1.2 ms for a claim of 500), and the
 * plan cache, which weighs a generic plan's estimate against the custom plans it made before,
 * keeps choosing a new custom plan for every execution: in a drain that planning was a sixth of
 * the database's time on claims (docs/performance.md, "Where the database's time goes"). The
 * generic plan is the one the plan tests check index by index, so forcing it costs nothing in
 * plan quality. The setting holds for one transaction ({@code SET LOCAL}), so nothing of it stays
 * on the pool's connection; a caller already in a transaction runs the statement as it is.
 */
final class GenericPlans {

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transaction;

    GenericPlans(DataSource dataSource, JdbcTemplate jdbc) {
        this.jdbc = jdbc;
        this.transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    <T> T run(Supplier<T> statement) {
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            return statement.get();
        }
        return transaction.execute(status -> {
            jdbc.execute("SET LOCAL plan_cache_mode = force_generic_plan");
            return statement.get();
        });
    }
}

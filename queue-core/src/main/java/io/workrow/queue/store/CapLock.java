package io.workrow.queue.store;

import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Work done under the lock of one queue's {@code workrow_queue_cap} row ({@link CapSql#CAP_LOCK}),
 * in a READ COMMITTED transaction, so that what it reads after the lock is as the last holder of
 * the lock committed it: a key-capped claim ({@link CappedClaim}) and a change of a node's share
 * of the cluster-wide cap ({@link CapShares}). The lock statement also reads the isolation and sets
 * generic plans for the transaction, as {@link GenericPlans} does outside one; where the
 * connections' default isolation is another (found at the first use), each transaction sets READ
 * COMMITTED first, one more round trip, which a transaction pooler keeps.
 */
final class CapLock {

    private static final Logger log = LoggerFactory.getLogger(CapLock.class);

    /** The caps in force of the locked queue ({@code null}: none). */
    record Caps(Integer cap, Integer keyCap) {
    }

    /** What runs under the lock, in its transaction. */
    @FunctionalInterface
    interface Locked<T> {

        T run(Caps caps);
    }

    private final JdbcTemplate jdbc;
    private final String lock;
    private final String ensure;
    private final TransactionTemplate transaction;
    private volatile boolean defaultIsReadCommitted = true;

    CapLock(DataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema) {
        this.jdbc = jdbc;
        this.lock = JobSql.render(CapSql.CAP_LOCK, schema);
        this.ensure = JobSql.render(CapSql.CAP_ENSURE, schema);
        this.transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /** Runs {@code work} in a transaction holding {@code queue}'s cap row, made first if missing. */
    <T> T run(String queue, Locked<T> work) {
        try {
            return transaction.execute(status -> locked(queue, work, !defaultIsReadCommitted));
        } catch (NotReadCommitted e) {
            defaultIsReadCommitted = false;
            log.info("The connections' default isolation is {}: each transaction under a queue's cap lock sets READ"
                    + " COMMITTED first, one more round trip", e.isolation);
            return transaction.execute(status -> locked(queue, work, true));
        }
    }

    private <T> T locked(String queue, Locked<T> work, boolean setReadCommitted) {
        if (setReadCommitted) {
            jdbc.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        }
        List<Row> rows = jdbc.query(lock, Row.MAPPER, queue);
        if (rows.isEmpty()) {
            jdbc.update(ensure, queue);
            rows = jdbc.query(lock, Row.MAPPER, queue);
        }
        Row row = rows.get(0);
        if (!"read committed".equals(row.isolation)) {
            if (setReadCommitted) {
                throw new IllegalStateException("A transaction under the cap lock of queue " + queue + " runs at"
                        + " isolation " + row.isolation + " though it set READ COMMITTED: it would miss what was"
                        + " committed before its lock");
            }
            throw new NotReadCommitted(row.isolation);
        }
        return work.run(new Caps(row.cap, row.keyCap));
    }

    private record Row(Integer cap, Integer keyCap, String isolation) {

        static final RowMapper<Row> MAPPER = (rs, row) -> new Row((Integer) rs.getObject("cap"),
                (Integer) rs.getObject("key_cap"), rs.getString("isolation"));
    }

    /** The transaction runs at another isolation than READ COMMITTED: rolled back, and run again at it. */
    private static final class NotReadCommitted extends RuntimeException {

        private final String isolation;

        NotReadCommitted(String isolation) {
            super("isolation " + isolation, null, false, false);
            this.isolation = isolation;
        }
    }
}

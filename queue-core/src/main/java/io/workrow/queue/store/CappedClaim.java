package io.workrow.queue.store;

import static io.workrow.queue.store.ArrayParameters.column;

import java.sql.PreparedStatement;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A capped queue's claim ({@link CapSql}): in one transaction, locks the queue's cap row (the
 * claims of one capped queue take turns, on every node), counts its open positions in a snapshot
 * taken after the lock, and claims at most the room left ({@link ClaimStore#roomUnderCap}). Ends
 * and the sweeper only lower the count meanwhile, so the cap holds when the claim commits.
 *
 * <p>Four round trips, against one for a plain claim: the lock (which also reads the isolation
 * level and sets generic plans for the claim, as {@link GenericPlans} would outside a
 * transaction), the count, the claim and the commit. The count must run in a snapshot taken after
 * the lock, which only READ COMMITTED gives; a database whose default isolation is another pays
 * one more round trip per claim to set it, found out at the first claim.
 */
final class CappedClaim {

    private static final Logger log = LoggerFactory.getLogger(CappedClaim.class);

    private final JdbcTemplate jdbc;
    private final String lock;
    private final String ensure;
    private final String running;
    private final TransactionTemplate atDefaultIsolation;
    private final TransactionTemplate readCommitted;
    private volatile boolean defaultIsReadCommitted = true;

    CappedClaim(DataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema) {
        this.jdbc = jdbc;
        this.lock = JobSql.render(CapSql.CAP_LOCK, schema);
        this.ensure = JobSql.render(CapSql.CAP_ENSURE, schema);
        this.running = JobSql.render(CapSql.CAP_RUNNING, schema);
        DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
        this.atDefaultIsolation = new TransactionTemplate(transactions);
        this.readCommitted = new TransactionTemplate(transactions);
        this.readCommitted.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
    }

    /** {@link ClaimStore#claimCapped}. */
    List<ClaimedPosition> claim(String queue, int limit, int forSlots, List<ClaimedPosition> finished,
            ClaimStore.RoomClaim claim) {
        try {
            try {
                return (defaultIsReadCommitted ? atDefaultIsolation : readCommitted)
                        .execute(status -> claimLocked(queue, limit, forSlots, finished, claim));
            } catch (NotReadCommitted e) {
                defaultIsReadCommitted = false;
                log.info("The database's default isolation is {}: capped claims set READ COMMITTED for their"
                        + " transactions, one more round trip each", e.isolation);
                return readCommitted.execute(status -> claimLocked(queue, limit, forSlots, finished, claim));
            }
        } catch (ClaimRefused e) {
            // A claim that fails (an ordered claim overlapping another on a key) gives up until the
            // next poll; the transaction is rolled back whole, it wrote nothing the next one needs.
            return List.of();
        }
    }

    private List<ClaimedPosition> claimLocked(String queue, int limit, int forSlots, List<ClaimedPosition> finished,
            ClaimStore.RoomClaim claim) {
        List<CapRow> rows = jdbc.query(lock, CapRow.MAPPER, queue);
        if (rows.isEmpty()) {
            jdbc.update(ensure, queue);
            rows = jdbc.query(lock, CapRow.MAPPER, queue);
        }
        CapRow row = rows.get(0);
        if (!"read committed".equals(row.isolation)) {
            throw new NotReadCommitted(row.isolation);
        }
        // Under a per-key cap jobs in line would hold their keys' slots while they wait: no line.
        int wanted = row.keyCap == null ? limit : Math.min(limit, forSlots);
        if (row.cap == null) {
            return wanted <= 0 ? List.of() : refusable(claim, wanted, row.keyCap);
        }
        int open = jdbc.query(connection -> {
            PreparedStatement statement = connection.prepareStatement(running);
            statement.setArray(1, column(finished, "bigint", ClaimedPosition::token).create(connection));
            statement.setArray(2, column(finished, "integer", ClaimedPosition::position).create(connection));
            statement.setString(3, queue);
            return statement;
        }, rs -> rs.next() ? rs.getInt(1) : 0);
        int room = ClaimStore.roomUnderCap(row.cap, open, wanted, forSlots);
        return room <= 0 ? List.of() : refusable(claim, room, row.keyCap);
    }

    private static List<ClaimedPosition> refusable(ClaimStore.RoomClaim claim, int limit, Integer keyCap) {
        try {
            return claim.claim(limit, keyCap);
        } catch (DataAccessException e) {
            throw new ClaimRefused(e);
        }
    }

    private record CapRow(Integer cap, Integer keyCap, String isolation) {

        static final RowMapper<CapRow> MAPPER = (rs, row) -> new CapRow((Integer) rs.getObject("cap"),
                (Integer) rs.getObject("key_cap"), rs.getString("isolation"));
    }

    /** The transaction runs at another isolation than READ COMMITTED: rolled back, and run again at it. */
    private static final class NotReadCommitted extends RuntimeException {

        private final String isolation;

        NotReadCommitted(String isolation) {
            super(null, null, false, false);
            this.isolation = isolation;
        }
    }

    /** The claim statement failed: the transaction is rolled back, and the claim comes back empty. */
    private static final class ClaimRefused extends RuntimeException {

        ClaimRefused(DataAccessException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }
}

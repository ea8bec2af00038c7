package io.workrow.queue.store;

import static io.workrow.queue.store.ArrayParameters.column;

import java.sql.PreparedStatement;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A capped queue's claim ({@link CapSql}): in one transaction, locks the queue's cap row (the
 * claims of one capped queue take turns, on every node), counts its open positions in a snapshot
 * taken after the lock, and claims at most the room left ({@link CapAsk#room}). Ends and the
 * sweeper only lower the count meanwhile, so the cap holds when the claim commits.
 *
 * <p>Four round trips: the lock (which also reads the isolation level and sets generic plans for
 * the claim, as {@link GenericPlans} does outside a transaction), the count, the claim and the
 * commit. The count must run in a snapshot taken after the lock, which only READ COMMITTED gives;
 * where the connections' default isolation is another (found at the first claim), each claim sets
 * it for its own transaction first, one more round trip, which a transaction pooler keeps.
 */
final class CappedClaim {

    private static final Logger log = LoggerFactory.getLogger(CappedClaim.class);

    private final JdbcTemplate jdbc;
    private final String lock;
    private final String ensure;
    private final String running;
    private final TransactionTemplate transaction;
    private volatile boolean defaultIsReadCommitted = true;

    CappedClaim(DataSource dataSource, JdbcTemplate jdbc, SqlIdentifier schema) {
        this.jdbc = jdbc;
        this.lock = JobSql.render(CapSql.CAP_LOCK, schema);
        this.ensure = JobSql.render(CapSql.CAP_ENSURE, schema);
        this.running = JobSql.render(CapSql.CAP_RUNNING, schema);
        this.transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /** {@link ClaimStore#claimCapped}. */
    List<ClaimedPosition> claim(String queue, CapAsk ask, ClaimStore.RoomClaim claim) {
        try {
            try {
                return transaction.execute(status -> claimLocked(queue, ask, claim, !defaultIsReadCommitted));
            } catch (NotReadCommitted e) {
                defaultIsReadCommitted = false;
                log.info("The connections' default isolation is {}: each capped claim sets READ COMMITTED for its"
                        + " transaction, one more round trip", e.isolation);
                return transaction.execute(status -> claimLocked(queue, ask, claim, true));
            }
        } catch (ClaimRefused e) {
            // An ordered claim overlapping another on a key: the transaction is rolled back whole
            // (it wrote nothing the next one needs) and the claim gives up until the next poll.
            log.debug("queue={} capped claim refused, tried again at the next poll: {}", queue, e.getMessage());
            return List.of();
        }
    }

    private List<ClaimedPosition> claimLocked(String queue, CapAsk ask, ClaimStore.RoomClaim claim,
            boolean setReadCommitted) {
        if (setReadCommitted) {
            jdbc.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        }
        List<CapRow> rows = jdbc.query(lock, CapRow.MAPPER, queue);
        if (rows.isEmpty()) {
            jdbc.update(ensure, queue);
            rows = jdbc.query(lock, CapRow.MAPPER, queue);
        }
        CapRow row = rows.get(0);
        if (!"read committed".equals(row.isolation)) {
            if (setReadCommitted) {
                throw new IllegalStateException("A capped claim of queue " + queue + " runs at isolation "
                        + row.isolation + " though it set READ COMMITTED: its count would miss claims committed"
                        + " before its lock");
            }
            throw new NotReadCommitted(row.isolation);
        }
        // Under a per-key cap a job in line would hold its key's slot: no line.
        CapAsk asked = row.keyCap == null ? ask : ask.withoutLine();
        if (row.cap == null) {
            return asked.limit() <= 0 ? List.of() : refusable(claim, asked.limit(), row.keyCap);
        }
        int open = jdbc.query(connection -> {
            PreparedStatement statement = connection.prepareStatement(running);
            statement.setArray(1, column(asked.finished(), "bigint", ClaimedPosition::token).create(connection));
            statement.setArray(2, column(asked.finished(), "integer", ClaimedPosition::position).create(connection));
            statement.setString(3, queue);
            return statement;
        }, rs -> rs.next() ? rs.getInt(1) : 0);
        int room = asked.room(row.cap, open);
        return room <= 0 ? List.of() : refusable(claim, room, row.keyCap);
    }

    private static List<ClaimedPosition> refusable(ClaimStore.RoomClaim claim, int limit, Integer keyCap) {
        try {
            return claim.claim(limit, keyCap);
        } catch (DuplicateKeyException e) {
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
            super("isolation " + isolation, null, false, false);
            this.isolation = isolation;
        }
    }

    /** The claim statement was refused: the transaction is rolled back, and the claim comes back empty. */
    private static final class ClaimRefused extends RuntimeException {

        ClaimRefused(DuplicateKeyException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }
}

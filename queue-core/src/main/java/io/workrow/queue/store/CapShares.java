package io.workrow.queue.store;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The nodes' shares of the queues' cluster-wide caps ({@code workrow_cap_share}). A node changes
 * its share only under the queue's cap lock ({@link CapLock}), after reading the others' live shares
 * in a snapshot taken after the lock, so the live shares never add up to more than the cap when it
 * raises one: four round trips (lock, read, write, commit), taken when a node wants more or gives
 * back, not per claim.
 */
final class CapShares {

    private static final RowMapper<SlotShare> SHARE = (rs, row) -> new SlotShare(rs.getString("worker"),
            rs.getInt("slots"), rs.getInt("wanted"), rs.getLong("waited_ms"));

    private final CapLock lock;
    private final JdbcTemplate jdbc;
    private final String shares;
    private final String set;
    private final String drop;
    private final String renew;
    private final String dropAll;

    CapShares(CapLock lock, JdbcTemplate jdbc, SqlIdentifier schema) {
        this.lock = lock;
        this.jdbc = jdbc;
        this.shares = JobSql.render(CapSql.CAP_SHARES, schema);
        this.set = JobSql.render(CapSql.CAP_SHARE_SET, schema);
        this.drop = JobSql.render(CapSql.CAP_SHARE_DROP, schema);
        this.renew = JobSql.render(CapSql.CAP_SHARES_RENEW, schema);
        this.dropAll = JobSql.render(CapSql.CAP_SHARES_DROP_ALL, schema);
    }

    /** {@link ClaimStore#resizeShare}. */
    ShareGrant resize(String queue, String worker, Duration lease, Duration wantLife, ClaimStore.ShareRule rule) {
        return lock.run(queue, caps -> {
            if (caps.cap() == null) {
                jdbc.update(drop, queue, worker);
                return ShareGrant.uncapped();
            }
            List<SlotShare> others = jdbc.query(shares, SHARE, queue).stream()
                    .filter(share -> !share.worker().equals(worker)).toList();
            SlotShare mine = rule.decide(caps.cap(), others);
            if (mine.slots() == 0 && mine.wanted() == 0) {
                jdbc.update(drop, queue, worker);
            } else {
                // Slots count as long as the jobs run in them keep their leases; a want alone only as
                // long as the waiting node keeps asking.
                jdbc.update(set, queue, worker, mine.slots(), mine.wanted(),
                        (mine.slots() > 0 ? lease : wantLife).toMillis());
            }
            return new ShareGrant(caps.cap(), mine.slots());
        });
    }

    /** {@link ClaimStore#renewShares}. */
    Set<String> renew(String worker, Duration lease) {
        return Set.copyOf(jdbc.queryForList(renew, String.class, lease.toMillis(), worker));
    }

    /** {@link ClaimStore#dropShares}. */
    void dropAll(String worker, java.util.Collection<String> queues) {
        jdbc.update(connection -> {
            var statement = connection.prepareStatement(dropAll);
            statement.setString(1, worker);
            statement.setArray(2, connection.createArrayOf("text", queues.toArray()));
            return statement;
        });
    }
}

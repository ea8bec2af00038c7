package io.workrow.queue.store;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * Runs the worker registry statements ({@link WorkerSql}), one method per statement. Reached
 * through {@link JobStore#workers()}, on the same connections and statement timeout.
 */
public final class WorkerStore {

    /** A registered worker as operators see it. */
    public record RegisteredWorker(String id, List<String> queues, Instant startedAt, Instant heartbeatAt,
            boolean live) {
    }

    private final JdbcTemplate timed;
    private final String heartbeat;
    private final String deregister;
    private final String list;

    WorkerStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.heartbeat = JobSql.render(WorkerSql.WORKER_HEARTBEAT, schema);
        this.deregister = JobSql.render(WorkerSql.WORKER_DEREGISTER, schema);
        this.list = JobSql.render(WorkerSql.WORKER_LIST, schema);
    }

    /**
     * Beats for {@code workerId}, working {@code queues}; returns every live worker (this one
     * included) with its queues, live meaning a heartbeat within {@code liveness}.
     */
    public Map<String, Set<String>> heartbeat(String workerId, Set<String> queues, Duration liveness) {
        Map<String, Set<String>> live = new LinkedHashMap<>();
        timed.query(connection -> {
            var statement = connection.prepareStatement(heartbeat);
            statement.setString(1, workerId);
            statement.setArray(2, connection.createArrayOf("text", queues.stream().sorted().toArray()));
            statement.setLong(3, liveness.toMillis());
            statement.setLong(4, liveness.toMillis());
            return statement;
        }, (RowCallbackHandler) rs -> {
            String id = rs.getString("id");
            Set<String> workerQueues = Set.of(strings(rs.getArray("queues")));
            live.merge(id, workerQueues, (first, second) -> id.equals(workerId) ? Set.copyOf(queues) : first);
        });
        return live;
    }

    /** Removes {@code workerId} from the registry. */
    public void deregister(String workerId) {
        timed.update(deregister, workerId);
    }

    /** Every registered worker; live means a heartbeat within {@code liveness}. */
    public List<RegisteredWorker> list(Duration liveness) {
        return timed.query(list, (rs, row) -> new RegisteredWorker(rs.getString("id"),
                List.of(strings(rs.getArray("queues"))), JobStore.instant(rs, "started_at"), JobStore.instant(rs, "heartbeat_at"),
                rs.getBoolean("live")), liveness.toMillis());
    }

    private static String[] strings(Array array) throws SQLException {
        return array == null ? new String[0] : (String[]) array.getArray();
    }
}

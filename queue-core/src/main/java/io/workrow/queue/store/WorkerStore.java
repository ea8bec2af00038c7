package io.workrow.queue.store;

import java.sql.Array;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * Runs the worker registry statements ({@link WorkerSql}), one method per statement. Reached
 * through {@link JobStore#workers()}, on the same connections and statement timeout.
 */
public final class WorkerStore {

    private final JdbcTemplate timed;
    private final String heartbeat;
    private final String deregister;

    WorkerStore(JdbcTemplate timed, SqlIdentifier schema) {
        this.timed = timed;
        this.heartbeat = JobSql.render(WorkerSql.WORKER_HEARTBEAT, schema);
        this.deregister = JobSql.render(WorkerSql.WORKER_DEREGISTER, schema);
    }

    /**
     * Beats for {@code workerId}, working {@code queues}; returns the live workers with their
     * queues, live meaning a heartbeat within {@code liveness} (this one may be missing on its first
     * beat).
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
            live.put(rs.getString("id"), Set.of(strings(rs.getArray("queues"))));
        });
        return live;
    }

    /** Removes {@code workerId} from the registry. */
    public void deregister(String workerId) {
        timed.update(deregister, workerId);
    }

    private static String[] strings(Array array) throws SQLException {
        return array == null ? new String[0] : (String[]) array.getArray();
    }
}

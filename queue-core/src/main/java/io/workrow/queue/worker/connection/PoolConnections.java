package io.workrow.queue.worker.connection;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** What the runtime's long-held connections do before they go back to the pool. */
public final class PoolConnections {

    private PoolConnections() {
    }

    /**
     * Runs a query on a connection believed broken, so the pool sees it fail (Hikari marks it
     * evicted) before it is closed: closed first, a broken connection would go back as usable.
     */
    public static void revealBroken(Connection connection) {
        if (connection == null) {
            return;
        }
        try (Statement probe = connection.createStatement()) {
            probe.execute("SELECT 1");
        } catch (SQLException | RuntimeException expected) {
            // The connection is broken; the pool has now seen it fail.
        }
    }
}

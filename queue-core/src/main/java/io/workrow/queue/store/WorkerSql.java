package io.workrow.queue.store;

/**
 * The worker registry statements ({@code workrow_worker}, one row per running runtime that works
 * an ordered queue), mirrored by {@link WorkerStore}. A worker is live while its heartbeat, on the
 * database's clock, is fresher than the liveness window; rows of workers gone far longer are
 * deleted by whoever beats next. The table holds one row per worker, so every statement is a
 * primary key or a scan of a handful of rows.
 */
final class WorkerSql {

    private WorkerSql() {
    }

    /**
     * Records a heartbeat (registering the worker on its first), deletes workers silent for ten
     * liveness windows, and returns the live workers with their queues: one round trip. The
     * returned list is read from the statement's snapshot, which does not hold this worker's own
     * new row on its first beat; the caller counts itself live regardless.
     */
    static final String WORKER_HEARTBEAT = """
            WITH beat AS (
                INSERT INTO {worker} (id, queues) VALUES (?, ?::text[])
                ON CONFLICT (id) DO UPDATE SET queues = excluded.queues, heartbeat_at = clock_timestamp()
            ), gone AS (
                DELETE FROM {worker}
                WHERE heartbeat_at < clock_timestamp() - 10 * ? * interval '1 millisecond'
            )
            SELECT id, queues FROM {worker}
            WHERE heartbeat_at >= clock_timestamp() - ? * interval '1 millisecond'
            """;

    /** Removes a stopping worker at once, so its buckets move without waiting for the liveness window. */
    static final String WORKER_DEREGISTER = """
            DELETE FROM {worker} WHERE id = ?
            """;
}

package io.workrow.queue.faults;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the fault suite records beside Workrow's own table, in the schema Workrow's tables are in.
 *
 * <ul>
 *   <li>{@code fault_invocation}: one row per handler start, committed before the handler's work,
 *       with whether the job was then running under this worker's lease;</li>
 *   <li>{@code fault_effect}: one row per handler end, written in the handler's transaction, which
 *       commits only with the fenced completion. No unique constraint: a duplicate is counted,
 *       not hidden;</li>
 *   <li>{@code fault_lease}: every change of a job's lease token, with the lease it replaced and
 *       the session that changed it (each worker JVM connects with an application name of its
 *       own), written by a trigger on {@code workrow_job}: a lease taken from a holder before it
 *       expired, or a lease ended by a worker that was not granted it, is seen whoever did it.</li>
 *   <li>{@code fault_pool_hold}: when a worker's application held every connection of its pool,
 *       and how many it took.</li>
 * </ul>
 */
final class Ledgers {

    /**
     * Records a handler start: job id, attempt, worker pid, the worker's own clock, the job's lease
     * token at that moment, and whether that lease is this worker's ({@code claimed_by} is
     * {@code host:pid:suffix}); {@code invoked_at} is the database's clock.
     */
    static final String RECORD_INVOCATION = """
            INSERT INTO fault_invocation (job_id, attempt, worker, worker_clock, token, leased)
            SELECT ?, ?, ?, ?, lease_token, status = 'running' AND split_part(claimed_by, ':', 2) = ?::text
            FROM workrow_job WHERE id = ?
            """;

    /** Records a handler's effect, in its transaction: job id, worker pid, the token it held. */
    static final String RECORD_EFFECT = """
            INSERT INTO fault_effect (job_id, worker, token)
            SELECT ?, ?, lease_token FROM workrow_job WHERE id = ?
            """;

    /** Records that the application now holds {@code connections}, all its pool would give: job id, count. */
    static final String RECORD_POOL_HELD = """
            INSERT INTO fault_pool_hold (job_id, connections) VALUES (?, ?)
            """;

    /** Records that the application gives its connections back: job id. */
    static final String RECORD_POOL_RETURNED = """
            UPDATE fault_pool_hold SET held_until = clock_timestamp() WHERE job_id = ?
            """;

    private static final String CREATE = """
            CREATE TABLE IF NOT EXISTS fault_invocation (
                job_id bigint NOT NULL,
                attempt int NOT NULL,
                worker bigint NOT NULL,
                worker_clock timestamptz NOT NULL,
                token bigint,
                leased boolean NOT NULL,
                invoked_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE TABLE IF NOT EXISTS fault_effect (
                job_id bigint NOT NULL,
                worker bigint NOT NULL,
                token bigint,
                recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE TABLE IF NOT EXISTS fault_lease (
                job_id bigint NOT NULL,
                old_token bigint,
                new_token bigint,
                old_status text NOT NULL,
                new_status text NOT NULL,
                old_expires_at timestamptz,
                swept boolean NOT NULL,
                changed_by text NOT NULL,
                changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE TABLE IF NOT EXISTS fault_pool_hold (
                job_id bigint NOT NULL,
                connections int NOT NULL,
                held_from timestamptz NOT NULL DEFAULT clock_timestamp(),
                held_until timestamptz
            );
            CREATE OR REPLACE FUNCTION fault_lease_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO fault_lease (job_id, old_token, new_token, old_status, new_status, old_expires_at, swept,
                                         changed_by)
                VALUES (NEW.id, OLD.lease_token, NEW.lease_token, OLD.status, NEW.status, OLD.lease_expires_at,
                        NEW.lease_expiries > OLD.lease_expiries, current_setting('application_name'));
                RETURN NULL;
            END $$;
            DROP TRIGGER IF EXISTS fault_lease_changed ON workrow_job;
            CREATE TRIGGER fault_lease_changed AFTER UPDATE ON workrow_job
                FOR EACH ROW WHEN (OLD.lease_token IS DISTINCT FROM NEW.lease_token)
                EXECUTE FUNCTION fault_lease_changed();
            """;

    private Ledgers() {
    }

    /** Creates the ledgers and the trigger, in the schema on the connection's search path. */
    static void install(JdbcTemplate jdbc) {
        jdbc.execute(CREATE);
    }

    /** Empties the ledgers and the job table, for the next scenario. */
    static void clear(JdbcTemplate jdbc) {
        jdbc.execute("TRUNCATE fault_invocation, fault_effect, fault_lease, fault_pool_hold, workrow_job");
    }
}

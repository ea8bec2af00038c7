package io.workrow.queue.faults;

import io.workrow.queue.store.WriteOnceStore;
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
 *       own), written by triggers on the claim rows and the outcome log: a lease taken from a holder before it
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

    /** Records a capped run's start: job id, attempt, worker pid. */
    static final String RECORD_RUN_START = """
            INSERT INTO fault_run (job_id, attempt, worker) VALUES (?, ?, ?)
            """;

    /** Records a capped run's end: job id, attempt, worker pid. */
    static final String RECORD_RUN_END = """
            UPDATE fault_run SET ended_at = clock_timestamp() WHERE job_id = ? AND attempt = ? AND worker = ?
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
            CREATE TABLE IF NOT EXISTS fault_run (
                job_id bigint NOT NULL,
                attempt int NOT NULL,
                worker bigint NOT NULL,
                started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                ended_at timestamptz
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
                expiries int,
                changed_by text NOT NULL,
                changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE TABLE IF NOT EXISTS fault_pool_hold (
                job_id bigint NOT NULL,
                connections int NOT NULL,
                held_from timestamptz NOT NULL DEFAULT clock_timestamp(),
                held_until timestamptz
            );
            """;

    /**
     * A claim row grants a lease to each job it holds (one ledger row per
     * job, naming a grant of the same job still unended as the one it replaced), as does a claim
     * row given a new token, and every end of a
     * claimed attempt appends an outcome row under the claim's token (the ledger row that ends the
     * grant). {@code fault_claim} keeps each claim's last lease expiry, renewals included, since the
     * end that closes a claim's last position deletes its row. An end is a sweep when the sweeper's
     * statement wrote it: a handler let go past its timeout ends its own position as {@code expired}
     * too, under a lease that may still be ahead, which is no lease taken.
     */
    private static final String TRIGGERS = """
            CREATE TABLE IF NOT EXISTS fault_claim (
                token bigint PRIMARY KEY,
                lease_expires_at timestamptz NOT NULL
            );
            CREATE INDEX IF NOT EXISTS fault_lease_job_idx ON fault_lease (job_id);
            CREATE OR REPLACE FUNCTION fault_claim_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' OR NEW.token <> OLD.token THEN
                    INSERT INTO fault_lease (job_id, old_token, new_token, old_status, new_status, swept, expiries,
                                             changed_by)
                    SELECT held.id,
                           (SELECT granted.new_token FROM fault_lease AS granted
                            WHERE granted.job_id = held.id AND granted.new_token IS NOT NULL
                              AND NOT EXISTS (SELECT 1 FROM fault_lease AS ended
                                              WHERE ended.job_id = granted.job_id AND ended.old_token = granted.new_token
                                                AND ended.new_token IS NULL)
                            ORDER BY granted.changed_at DESC LIMIT 1),
                           NEW.token, 'pending', 'running', false, held.expiries, current_setting('application_name')
                    FROM unnest(NEW.ids, NEW.expiries) AS held(id, expiries);
                END IF;
                INSERT INTO fault_claim (token, lease_expires_at) VALUES (NEW.token, NEW.lease_expires_at)
                ON CONFLICT (token) DO UPDATE SET lease_expires_at = EXCLUDED.lease_expires_at;
                RETURN NULL;
            END $$;
            DROP TRIGGER IF EXISTS fault_claim_changed ON workrow_claim;
            CREATE TRIGGER fault_claim_changed AFTER INSERT OR UPDATE OF lease_expires_at, token ON workrow_claim
                FOR EACH ROW EXECUTE FUNCTION fault_claim_changed();
            CREATE OR REPLACE FUNCTION fault_attempt_ended() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO fault_lease (job_id, old_token, new_token, old_status, new_status, old_expires_at, swept,
                                         expiries, changed_by)
                SELECT NEW.job_id, NEW.claim_token, NULL, 'running', NEW.status, claim.lease_expires_at,
                       -- the sweeper's statement, the one writer of outcomes that reads the holders'
                       -- vouches: a let-go's expired end comes from its holder's end statement
                       NEW.status = 'expired' AND strpos(current_query(), 'workrow_lease_holder') > 0,
                       NEW.expiries, current_setting('application_name')
                FROM (SELECT 1) AS one
                LEFT JOIN fault_claim AS claim ON claim.token = NEW.claim_token;
                RETURN NULL;
            END $$;
            DROP TRIGGER IF EXISTS fault_attempt_ended ON workrow_outcome;
            CREATE TRIGGER fault_attempt_ended AFTER INSERT ON workrow_outcome
                FOR EACH ROW WHEN (NEW.claim_token IS NOT NULL) EXECUTE FUNCTION fault_attempt_ended();
            """;

    private Ledgers() {
    }

    /** Creates the ledgers and the trigger, in the schema on the connection's search path. */
    static void install(JdbcTemplate jdbc) {
        jdbc.execute(CREATE);
        jdbc.execute(TRIGGERS);
    }

    /** Empties the ledgers and the job table, for the next scenario. */
    static void clear(JdbcTemplate jdbc) {
        jdbc.execute("TRUNCATE fault_invocation, fault_effect, fault_lease, fault_pool_hold, fault_run");
        jdbc.execute("TRUNCATE fault_claim, " + String.join(", ", WriteOnceStore.JOB_TABLES));
    }
}

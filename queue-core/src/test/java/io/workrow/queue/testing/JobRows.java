package io.workrow.queue.testing;

import io.workrow.queue.store.SqlIdentifier;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What an operator, another node or a failure does to a job's rows behind the runtime's back, in
 * the home its state lives in (ready, scheduled, a claim row shared by its batch, dead). Reads need
 * none of this: {@code workrow_job} answers them.
 */
public final class JobRows {

    private final JdbcTemplate jdbc;
    private final String schema;

    JobRows(JdbcTemplate jdbc, SqlIdentifier schema) {
        this.jdbc = jdbc;
        this.schema = schema.quoted() + ".";
    }

    /** Makes a waiting job due since {@code ago}, scheduled or not. */
    public void makeDue(long id, Duration ago) {
        jdbc.update(sql("WITH moved AS (DELETE FROM {s}workrow_scheduled WHERE id = ? RETURNING *)"
                + " INSERT INTO {s}workrow_ready SELECT * FROM moved"), id);
        jdbc.update(sql("UPDATE {s}workrow_ready SET run_at = now() - ? * interval '1 millisecond' WHERE id = ?"),
                ago.toMillis(), id);
    }

    /** Makes every waiting job of {@code queue} due since {@code ago}. */
    public void makeQueueDue(String queue, Duration ago) {
        jdbc.update(sql("WITH moved AS (DELETE FROM {s}workrow_scheduled WHERE queue = ? RETURNING *)"
                + " INSERT INTO {s}workrow_ready SELECT * FROM moved"), queue);
        jdbc.update(sql("UPDATE {s}workrow_ready SET run_at = now() - ? * interval '1 millisecond'"
                + " WHERE queue = ?"), ago.toMillis(), queue);
    }

    /** Overwrites a job's payload, as a producer of another version or a hand-written INSERT would. */
    public void setPayload(long id, String json) {
        jdbc.update(sql("UPDATE {s}workrow_job_data SET payload = ?::jsonb WHERE id = ?"), json, id);
    }

    /** Gives a job a new idempotency key, freeing its old one. */
    public void setIdempotencyKey(long id, String key) {
        jdbc.update(sql("UPDATE {s}workrow_job_key SET idempotency_key = ? WHERE job_id = ?"), key, id);
        jdbc.update(sql("UPDATE {s}workrow_job_data SET idempotency_key = ? WHERE id = ?"), key, id);
    }

    /** Sets the attempts a waiting job has spent. */
    public void setAttempts(long id, int attempts) {
        jdbc.update(sql("UPDATE {s}workrow_ready SET attempts = ? WHERE id = ?"), attempts, id);
        jdbc.update(sql("UPDATE {s}workrow_scheduled SET attempts = ? WHERE id = ?"), attempts, id);
    }

    /** Ends a running job's lease a second ago (its whole claim's). */
    public void expireLease(long id) {
        jdbc.update(sql("UPDATE {s}workrow_claim SET lease_expires_at = now() - interval '1 second'"
                + " WHERE ids @> ARRAY[?::bigint]"), id);
    }

    /** Ends every running job's lease a second ago, as when its node died. */
    public void expireEveryLease() {
        jdbc.update(sql("UPDATE {s}workrow_claim SET lease_expires_at = now() - interval '1 second'"));
    }

    /** Makes every running job's current attempt one that fell due {@code ago}. */
    public void setRunningDueSince(Duration ago) {
        jdbc.update(sql("UPDATE {s}workrow_claim SET run_ats = array_fill(now() - ? * interval '1 millisecond',"
                        + " ARRAY[cardinality(ids)])"),
                ago.toMillis());
    }

    /** Sets how many times a running job's lease has expired before. */
    public void setRunningExpiries(long id, int expiries) {
        jdbc.update(sql("UPDATE {s}workrow_claim SET expiries[array_position(ids, ?::bigint)] = ?"
                + " WHERE ids @> ARRAY[?::bigint]"), id, expiries, id);
    }

    /**
     * Hands a running job to another worker under a new lease token, as a sweep and a claim
     * elsewhere would (its whole claim).
     */
    public void stealLease(long id, String thief) {
        jdbc.update(sql("UPDATE {s}workrow_claim SET worker = ?, token = nextval('{s}workrow_lease_token_seq')"
                        + " WHERE ids @> ARRAY[?::bigint]"), thief, id);
    }

    /**
     * What a sweep does to a running job whose lease ran out: waiting and due again, no holder,
     * its attempts kept (every open job of its claim).
     */
    public void requeueAsSwept(long id) {
        jdbc.update(sql("""
                WITH gone AS (DELETE FROM {s}workrow_claim WHERE ids @> ARRAY[?::bigint] RETURNING *),
                held AS (SELECT gone.queue, held.*
                         FROM gone
                         CROSS JOIN LATERAL unnest(gone.ids, gone.attempts, gone.expiries)
                              WITH ORDINALITY AS held(id, attempt, expiries, position)
                         WHERE get_bit(gone.settled, held.position::int - 1) = 0
                           AND get_bit(gone.dropped, held.position::int - 1) = 0)
                INSERT INTO {s}workrow_ready (id, queue, priority, run_at, attempts, max_attempts, expiries,
                                              partition_key, partition_bucket, fairness_key)
                SELECT held.id, held.queue, data.priority, now(), held.attempt, data.max_attempts, held.expiries,
                       data.partition_key, data.partition_bucket, data.fairness_key
                FROM held JOIN {s}workrow_job_data AS data ON data.id = held.id
                """), id);
    }

    /**
     * Moves a running job to dead without its holder knowing, as an operator's hand-written
     * statement would (its claim row goes: the test's claim holds it alone).
     */
    public void killRunning(long id) {
        jdbc.update(sql("""
                WITH gone AS (DELETE FROM {s}workrow_claim WHERE ids @> ARRAY[?::bigint] RETURNING *)
                INSERT INTO {s}workrow_dead (id, queue, attempts, max_attempts, last_error, finished_at)
                SELECT ?, gone.queue, gone.attempts[array_position(gone.ids, ?::bigint)], data.max_attempts,
                       'killed by hand', now()
                FROM gone JOIN {s}workrow_job_data AS data ON data.id = ?
                """), id, id, id, id);
    }

    /** Moves a waiting job to dead, as an operator's hand-written statement would. */
    public void killWaiting(long id) {
        killWaiting(id, "killed by hand");
    }

    /** Moves a waiting job to dead with {@code error} as its last error ({@code null}: the one it has). */
    public void killWaiting(long id, String error) {
        jdbc.update(sql("""
                WITH gone AS (DELETE FROM {s}workrow_ready WHERE id = ? RETURNING *),
                gone_later AS (DELETE FROM {s}workrow_scheduled WHERE id = ? RETURNING *)
                INSERT INTO {s}workrow_dead (id, queue, attempts, max_attempts, expiries, last_error, last_error_at,
                                             finished_at)
                SELECT id, queue, attempts, max_attempts, expiries, coalesce(?, last_error), now(), now()
                FROM (SELECT * FROM gone UNION ALL SELECT * FROM gone_later) AS waiting
                """), id, id, error);
    }

    /** Records a step for a waiting or running job, as its handler's {@code saveStep} would have. */
    public void setStep(long id, String step) {
        jdbc.update(sql("INSERT INTO {s}workrow_step (job_id, step) VALUES (?, ?)"
                + " ON CONFLICT (job_id) DO UPDATE SET step = EXCLUDED.step"), id, step);
    }

    /**
     * Inserts {@code count} finished jobs of {@code queue} ({@code completed}, {@code cancelled} or
     * {@code dead}) with {@code error} as their last error, the i-th (from 1) finished {@code i}
     * milliseconds after {@code finishedAt}, as months of history or a hand-written INSERT would.
     */
    public void insertFinished(String queue, String status, int count, String error, Instant finishedAt) {
        Timestamp at = Timestamp.from(finishedAt);
        jdbc.update(sql("""
                WITH data AS (
                    INSERT INTO {s}workrow_job_data (queue, partition_bucket, payload, max_attempts)
                    SELECT ?, 0, '{}', 5 FROM generate_series(1, ?)
                    RETURNING id
                ), finished AS MATERIALIZED (
                    SELECT id, ?::timestamptz + row_number() OVER (ORDER BY id) * interval '1 millisecond' AS at
                    FROM data
                ), dead AS (
                    INSERT INTO {s}workrow_dead (id, queue, attempts, max_attempts, last_error, last_error_at,
                                                 finished_at)
                    SELECT id, ?, 5, 5, ?, at, at FROM finished WHERE ? = 'dead'
                )
                INSERT INTO {s}workrow_outcome (job_id, attempt, queue, status, finished_at, error)
                SELECT id, 5, ?, ?, at, ? FROM finished
                """), queue, count, at, queue, error, status, queue, status, error);
    }

    /** Sets when a finished job finished (for a dead job, when it died). */
    public void setFinishedAt(long id, Instant at) {
        setFinishedAt("id", id, at);
    }

    /** Sets when every finished job of {@code queue} finished. */
    public void setFinishedAtOfQueue(String queue, Instant at) {
        setFinishedAt("queue", queue, at);
    }

    private void setFinishedAt(String column, Object value, Instant instant) {
        Timestamp at = Timestamp.from(instant);
        jdbc.update(sql("UPDATE {s}workrow_dead SET finished_at = ?, last_error_at = ? WHERE " + column + " = ?"),
                at, at, value);
        jdbc.update(sql("UPDATE {s}workrow_outcome SET finished_at = ?"
                + " WHERE status IN ('completed', 'cancelled', 'dead') AND "
                + ("id".equals(column) ? "job_id" : column) + " = ?"), at, value);
    }

    /**
     * A statement that locks the row a running job's end must lock, as an operator's forgotten
     * {@code SELECT ... FOR UPDATE} would (its claim: every job of the batch).
     */
    public String lockRunningJob(long id) {
        return sql("SELECT token FROM {s}workrow_claim WHERE ids @> ARRAY[" + id + "::bigint] FOR UPDATE");
    }

    /** A statement that locks the rows of every running job of {@code queue}, as {@link #lockRunningJob} does one. */
    public String lockRunningJobsOf(String queue) {
        String literal = "'" + queue.replace("'", "''") + "'";
        return sql("SELECT token FROM {s}workrow_claim WHERE queue = " + literal + " FOR UPDATE");
    }

    private String sql(String template) {
        return template.replace("{s}", schema);
    }
}

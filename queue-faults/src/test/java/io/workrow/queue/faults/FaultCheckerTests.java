package io.workrow.queue.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/** The checker counts each kind of broken promise when the ledgers show one: its zeros mean something. */
class FaultCheckerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcTemplate jdbc = database.jdbc();
    private final JdbcJobQueue queue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void ledgers() {
        Ledgers.install(jdbc);
        Ledgers.clear(jdbc);
    }

    @Test
    void aJobCompletedOnceUnderItsLeaseCountsNothing() {
        long id = enqueue();
        claim(id, 1, "10 seconds");
        jdbc.update("INSERT INTO fault_effect (job_id, worker, token) VALUES (?, 1, 1)", id);
        complete(id);
        assertThat(new FaultChecker(jdbc).check(List.of(id))).containsEntry("lost", 0L)
                .containsEntry("duplicate_effects", 0L).containsEntry("stale_effects", 0L)
                .containsEntry("lease_overlaps", 0L).containsEntry("accepted_late_finalizes", 0L)
                .containsEntry("invocations_without_lease", 0L);
    }

    @Test
    void eachBrokenPromiseIsCounted() {
        long neverCompleted = enqueue();
        long twice = enqueue();
        long stolen = enqueue();
        // Two effects for one job, the second under a token that did not complete it.
        claim(twice, 7, "10 seconds");
        jdbc.update("INSERT INTO fault_effect (job_id, worker, token) VALUES (?, 1, 7), (?, 2, 8)", twice, twice);
        complete(twice);
        // The sweeper's statement run on a lease that has not expired.
        claim(stolen, 9, "1 hour");
        jdbc.update("""
                UPDATE workrow_job SET status = 'pending', lease_token = NULL, lease_expires_at = NULL,
                       claimed_by = NULL, lease_expiries = lease_expiries + 1 WHERE id = ?
                """, stolen);
        // A lease ended by another worker's session than the one it was granted to.
        long finishedByAnother = enqueue();
        claim(finishedByAnother, 11, "10 seconds");
        jdbc.execute((ConnectionCallback<Object>) connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET application_name = 'fault-worker:another'");
                statement.execute("UPDATE workrow_job SET status = 'completed', finished_at = now(), lease_token = NULL,"
                        + " lease_expires_at = NULL WHERE id = " + finishedByAnother);
                statement.execute("RESET application_name");
            }
            return null;
        });
        // A handler started while its job was not running under its worker's lease.
        jdbc.update("INSERT INTO fault_invocation (job_id, attempt, worker, worker_clock, token, leased)"
                + " VALUES (?, 1, 1, now(), NULL, false)", neverCompleted);
        Map<String, Object> figures = new FaultChecker(jdbc).check(List.of(neverCompleted, twice, stolen,
                finishedByAnother));
        assertThat(figures).containsEntry("lost", 2L).containsEntry("duplicate_effects", 1L)
                .containsEntry("stale_effects", 1L).containsEntry("lease_overlaps", 1L).containsEntry("leases_swept", 1L)
                .containsEntry("accepted_late_finalizes", 1L).containsEntry("invocations_without_lease", 1L);
    }

    private long enqueue() {
        return queue.enqueue(JobRequest.of("checker", Map.of("millis", 0)));
    }

    private void claim(long id, long token, String lease) {
        jdbc.update("UPDATE workrow_job SET status = 'running', claimed_by = 'test', lease_token = ?,"
                + " lease_expires_at = now() + ?::interval, attempts = attempts + 1 WHERE id = ?", token, lease, id);
    }

    private void complete(long id) {
        jdbc.update("UPDATE workrow_job SET status = 'completed', finished_at = now(), lease_token = NULL,"
                + " lease_expires_at = NULL WHERE id = ?", id);
    }
}

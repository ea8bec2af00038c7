package io.workrow.queue.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.store.RecoveryRule;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * The checker counts each kind of broken promise when the ledgers show one: its zeros mean
 * something. The jobs are claimed, swept and ended by the store's own statements, so the ledger's
 * triggers record them as they record a fault run.
 */
class FaultCheckerTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final RecoveryRule NO_BACKOFF = new RecoveryRule(null, 0, 1.0, 0, 0.0, 0);

    private final JdbcTemplate jdbc = database.jdbc();
    private final JobStore store = database.store();
    private final JdbcJobQueue queue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());

    @BeforeEach
    void ledgers() {
        Ledgers.install(jdbc);
        Ledgers.clear(jdbc);
    }

    @Test
    void aJobCompletedOnceUnderItsLeaseCountsNothing() {
        long id = enqueue("once");
        ClaimedPosition job = claim("once", Duration.ofSeconds(10));
        effect(id, 1, job.token());
        assertThat(complete(job)).isEqualTo(EndResult.Verdict.ACCEPTED);
        assertThat(new FaultChecker(jdbc).check(List.of(id))).containsEntry("completed", 1L).containsEntry("lost", 0L)
                .containsEntry("duplicate_effects", 0L).containsEntry("stale_effects", 0L)
                .containsEntry("lease_overlaps", 0L).containsEntry("accepted_late_finalizes", 0L)
                .containsEntry("invocations_without_lease", 0L).containsEntry("leases_swept", 0L)
                .containsEntry("grants_ended_twice", 0L);
    }

    @Test
    void aLeaseSweptAfterItExpiredIsNoOverlap() {
        long id = enqueue("expired");
        claim("expired", Duration.ofSeconds(10));
        database.rows().expireLease(id);
        assertThat(store.sweepExpiredLeases(10, List.of(), NO_BACKOFF)).hasSize(1);
        ClaimedPosition again = claim("expired", Duration.ofSeconds(10));
        effect(id, 1, again.token());
        complete(again);
        assertThat(new FaultChecker(jdbc).check(List.of(id))).containsEntry("lost", 0L)
                .containsEntry("lease_overlaps", 0L).containsEntry("stale_effects", 0L)
                .containsEntry("accepted_late_finalizes", 0L).containsEntry("leases_swept", 1L);
    }

    @Test
    void eachBrokenPromiseIsCounted() {
        long neverCompleted = enqueue("never");
        long twice = enqueue("twice");
        long stolen = enqueue("stolen");
        long finishedByAnother = enqueue("another");
        // Two effects for one job, the second under a token that did not complete it.
        ClaimedPosition twiceClaimed = claim("twice", Duration.ofSeconds(10));
        effect(twice, 1, twiceClaimed.token());
        effect(twice, 2, twiceClaimed.token() + 1000);
        complete(twiceClaimed);
        // A lease swept while the ledger last saw it an hour ahead (a sweep that did not wait for
        // its expiry), then granted again while that sweep's grant was never ended.
        claim("stolen", Duration.ofSeconds(10));
        database.rows().expireLease(stolen);
        assertThat(store.sweepExpiredLeases(10, List.of(), NO_BACKOFF)).hasSize(1);
        jdbc.update("UPDATE fault_lease SET old_expires_at = changed_at + interval '1 hour' WHERE job_id = ? AND swept",
                stolen);
        // A lease ended by another worker's session than the one it was granted to.
        ClaimedPosition another = claim("another", Duration.ofSeconds(10));
        assertThat(jdbc.execute((ConnectionCallback<EndResult.Verdict>) connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET application_name = 'fault-worker:another'");
            }
            try {
                return store.on(new SingleConnectionDataSource(connection, true)).claims()
                        .endMany(List.of(PositionEnd.completed(another))).values().iterator().next().verdict();
            } finally {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("RESET application_name");
                }
            }
        })).isEqualTo(EndResult.Verdict.ACCEPTED);
        // A lease ended a second time, by the session it was granted to (the ledger's end row again).
        jdbc.update("""
                INSERT INTO fault_lease (job_id, old_token, new_token, old_status, new_status, swept, changed_by)
                SELECT job_id, old_token, NULL, old_status, new_status, false, changed_by
                FROM fault_lease WHERE job_id = ? AND old_token IS NOT NULL AND new_token IS NULL
                """, twice);
        // A handler started while its job was not running under its worker's lease.
        jdbc.update("INSERT INTO fault_invocation (job_id, attempt, worker, worker_clock, token, leased)"
                + " VALUES (?, 1, 1, now(), NULL, false)", neverCompleted);
        Map<String, Object> figures = new FaultChecker(jdbc).check(List.of(neverCompleted, twice, stolen,
                finishedByAnother));
        assertThat(figures).containsEntry("lost", 2L).containsEntry("duplicate_effects", 1L)
                .containsEntry("stale_effects", 1L).containsEntry("lease_overlaps", 1L).containsEntry("leases_swept", 1L)
                .containsEntry("accepted_late_finalizes", 1L).containsEntry("invocations_without_lease", 1L)
                .containsEntry("grants_ended_twice", 1L);
    }

    @Test
    void aRunningJobCancelledFromAnotherSessionIsNoLateFinalize() {
        long id = enqueue("cancelled");
        claim("cancelled", Duration.ofSeconds(10));
        assertThat(jdbc.execute((ConnectionCallback<Boolean>) connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET application_name = 'operator'");
            }
            try {
                return store.on(new SingleConnectionDataSource(connection, true)).cancel("cancelled", id);
            } finally {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("RESET application_name");
                }
            }
        })).isTrue();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM fault_lease WHERE job_id = ? AND new_status = 'cancelled'"
                + " AND changed_by = 'operator'", Integer.class, id)).as("the cancel ended the lease").isOne();
        assertThat(new FaultChecker(jdbc).check(List.of(id))).containsEntry("accepted_late_finalizes", 0L)
                .containsEntry("grants_ended_twice", 0L);
    }

    @Test
    void aLeaseHandedToAnotherWorkerBeforeItEndedIsAnOverlap() {
        long id = enqueue("regranted");
        claim("regranted", Duration.ofSeconds(10));
        database.rows().stealLease(id, "vm:2:thief");
        assertThat(new FaultChecker(jdbc).check(List.of(id))).containsEntry("lease_overlaps", 1L);
    }

    private long enqueue(String queueName) {
        return queue.enqueue(JobRequest.of(queueName, Map.of("millis", 0)));
    }

    private ClaimedPosition claim(String queueName, Duration lease) {
        List<ClaimedPosition> claimed = store.claims().claim(queueName, "vm:1:checker", 1, lease, false);
        assertThat(claimed).hasSize(1);
        return claimed.get(0);
    }

    private void effect(long id, long worker, long token) {
        jdbc.update("INSERT INTO fault_effect (job_id, worker, token) VALUES (?, ?, ?)", id, worker, token);
    }

    private EndResult.Verdict complete(ClaimedPosition job) {
        return store.claims().endMany(List.of(PositionEnd.completed(job))).get(PositionEnd.completed(job)).verdict();
    }
}

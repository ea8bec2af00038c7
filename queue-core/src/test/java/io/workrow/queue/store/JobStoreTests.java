package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.JobStatus;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class JobStoreTests {

    private static final RecoveryRule NO_BACKOFF = new RecoveryRule(null, 0, 1.0, 0, 0.0, 0);

    @RegisterExtension
    static final WorkrowTestDatabase database = WorkrowTestDatabase.withRowPerJobLayout();

    private RowPerJobStore store;

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        store = database.rowPerJobStore();
    }

    private static NewJob job(String queue, String key) {
        return new NewJob(queue, null, 7, 0, key, "{\"n\":1}", "{}", null, 0, 3);
    }

    private Map<String, Object> row(long id) {
        return database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", id);
    }

    @Nested
    class InsertMany {

        @Test
        void returnsIdsInRequestOrder() {
            List<NewJob> jobs = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                jobs.add(new NewJob("q", null, i, 0, i % 5 == 0 ? "key-" + i : null, "{\"n\":" + i + "}", "{}",
                        null, 0, 3));
            }
            List<Long> ids = store.insertMany(jobs);
            assertThat(ids).hasSize(50).doesNotHaveDuplicates();
            for (int i = 0; i < 50; i++) {
                assertThat(database.jdbc().queryForObject("SELECT payload->>'n' FROM workrow_job WHERE id = ?",
                        String.class, ids.get(i))).isEqualTo(Integer.toString(i));
            }
        }

        @Test
        void existingIdempotencyKeyReturnsTheFirstJobAndInsertsNothing() {
            long first = store.insertMany(List.of(job("q", "once"))).get(0);
            List<Long> again = store.insertMany(List.of(job("q", "once"), job("q", null), job("q", "once")));
            assertThat(again.get(0)).isEqualTo(first);
            assertThat(again.get(2)).isEqualTo(first);
            assertThat(again.get(1)).isNotEqualTo(first);
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isEqualTo(2);
        }

        @Test
        void sameKeyOnAnotherQueueIsAnotherJob() {
            long a = store.insertMany(List.of(job("a", "k"))).get(0);
            long b = store.insertMany(List.of(job("b", "k"))).get(0);
            assertThat(a).isNotEqualTo(b);
        }

        @Test
        void delayAndRunAtAreMeasuredFromTheDatabase() {
            Instant at = Instant.parse("2030-01-01T00:00:00Z");
            long scheduled = store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", at, 0, 3))).get(0);
            assertThat(database.jdbc().queryForObject("SELECT run_at = '2030-01-01T00:00:00Z' FROM workrow_job WHERE id = ?",
                    Boolean.class, scheduled)).isTrue();
        }

        @Test
        void aDelayCountsFromTheEnqueueingStatementNotFromItsTransactionsStart() {
            var transactions = new org.springframework.transaction.support.TransactionTemplate(
                    new org.springframework.jdbc.datasource.DataSourceTransactionManager(database.dataSource()));
            long delayed = transactions.execute(status -> {
                database.jdbc().execute("SELECT pg_sleep(0.5)");
                return store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 60_000, 3))).get(0);
            });
            // created_at is the transaction's start; the delay runs from the insert, half a second later.
            assertThat(database.jdbc().queryForObject(
                    "SELECT run_at - created_at BETWEEN interval '60.5 seconds' AND interval '62 seconds'"
                    + " FROM workrow_job WHERE id = ?", Boolean.class, delayed)).isTrue();
        }
    }

    @Nested
    class Claim {

        @Test
        void claimsDueJobsInPriorityOrderAndCountsTheAttempt() {
            long low = store.insertMany(List.of(new NewJob("q", null, 0, 5, null, "{}", "{}", null, 0, 3))).get(0);
            long high = store.insertMany(List.of(new NewJob("q", null, 0, -1, null, "{}", "{}", null, 0, 3))).get(0);
            store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 3_600_000, 3)));

            List<ClaimedJob> claimed = store.claim("q", "worker-a", 1, Duration.ofMinutes(1));
            assertThat(claimed).extracting(ClaimedJob::id).containsExactly(high);
            assertThat(claimed.get(0).attempt()).isEqualTo(1);

            List<ClaimedJob> rest = store.claim("q", "worker-a", 10, Duration.ofMinutes(1));
            assertThat(rest).extracting(ClaimedJob::id).containsExactly(low);
            Map<String, Object> row = row(low);
            assertThat(row.get("status")).isEqualTo("running");
            assertThat(row.get("claimed_by")).isEqualTo("worker-a");
            assertThat(row.get("lease_expires_at")).isNotNull();
        }

        @Test
        void eachClaimTakesANewToken() {
            long id = store.insertMany(List.of(job("q", null))).get(0);
            ClaimedJob first = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            store.failMany(List.of(new JobFailure(id, first.leaseToken(), "boom", Duration.ZERO, false)));
            ClaimedJob second = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            assertThat(second.leaseToken()).isNotEqualTo(first.leaseToken());
            assertThat(second.attempt()).isEqualTo(2);
        }

        @Test
        void otherQueuesAreNotClaimed() {
            store.insertMany(List.of(job("other", null)));
            assertThat(store.claim("q", "w", 10, Duration.ofMinutes(1))).isEmpty();
        }
    }

    @Nested
    class Finalize {

        @Test
        void completeManyReportsWhichJobsWereStillHeld() {
            store.insertMany(List.of(job("q", null), job("q", null)));
            List<ClaimedJob> claimed = store.claim("q", "w", 2, Duration.ofMinutes(1));
            HeldJob good = new HeldJob(claimed.get(0).id(), claimed.get(0).leaseToken());
            HeldJob stale = new HeldJob(claimed.get(1).id(), claimed.get(1).leaseToken() + 1_000_000);
            Set<HeldJob> completed = store.completeMany(List.of(good, stale));
            assertThat(completed).containsExactly(good);
            assertThat(row(good.id()).get("status")).isEqualTo("completed");
            assertThat(row(stale.id()).get("status")).isEqualTo("running");
        }

        @Test
        void failWithAttemptsLeftReschedulesAndFailOnTheLastAttemptIsDead() {
            long id = store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 0, 2))).get(0);
            ClaimedJob first = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            Map<HeldJob, JobStatus> afterFirst = store.failMany(
                    List.of(new JobFailure(id, first.leaseToken(), "first", Duration.ZERO, false)));
            assertThat(afterFirst).containsEntry(new HeldJob(id, first.leaseToken()), JobStatus.PENDING);
            assertThat(row(id).get("claimed_by")).isNull();

            ClaimedJob second = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            Map<HeldJob, JobStatus> afterSecond = store.failMany(
                    List.of(new JobFailure(id, second.leaseToken(), "second", Duration.ZERO, false)));
            assertThat(afterSecond).containsEntry(new HeldJob(id, second.leaseToken()), JobStatus.DEAD);
            Map<String, Object> row = row(id);
            assertThat(row.get("last_error")).isEqualTo("second");
            assertThat(row.get("attempts")).isEqualTo(2);
            assertThat(row.get("finished_at")).isNotNull();
        }

        @Test
        void discardIsDeadAtOnce() {
            long id = store.insertMany(List.of(job("q", null))).get(0);
            ClaimedJob claimed = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            assertThat(store.failMany(List.of(new JobFailure(id, claimed.leaseToken(), "not worth it", Duration.ZERO,
                    true)))).containsEntry(new HeldJob(id, claimed.leaseToken()), JobStatus.DEAD);
            assertThat(row(id).get("status")).isEqualTo("dead");
            assertThat(row(id).get("attempts")).isEqualTo(1);
        }

        @Test
        void extendLeaseAndSaveStepAreFenced() {
            long id = store.insertMany(List.of(job("q", null))).get(0);
            ClaimedJob claimed = store.claim("q", "w", 1, Duration.ofSeconds(1)).get(0);
            HeldJob held = new HeldJob(id, claimed.leaseToken());
            assertThat(store.extendLease(held, Duration.ofHours(1))).isTrue();
            assertThat(database.jdbc().queryForObject(
                    "SELECT lease_expires_at > now() + interval '59 minutes' FROM workrow_job WHERE id = ?",
                    Boolean.class, id)).isTrue();
            assertThat(store.saveStep(held, "charged")).isTrue();
            assertThat(row(id).get("step")).isEqualTo("charged");

            HeldJob impostor = new HeldJob(id, claimed.leaseToken() + 1);
            assertThat(store.extendLease(impostor, Duration.ofHours(2))).isFalse();
            assertThat(store.saveStep(impostor, "other")).isFalse();
            assertThat(row(id).get("step")).isEqualTo("charged");
        }

        @Test
        void releaseOfAnUnstartedJobGivesTheAttemptBack() {
            long id = store.insertMany(List.of(job("q", null))).get(0);
            ClaimedJob claimed = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            assertThat(store.releaseMany(List.of(new JobRelease(id, claimed.leaseToken(), true))))
                    .containsEntry(new HeldJob(id, claimed.leaseToken()), JobStatus.PENDING);
            Map<String, Object> row = row(id);
            assertThat(row.get("status")).isEqualTo("pending");
            assertThat(row.get("claimed_by")).isNull();
            assertThat(row.get("lease_token")).isNull();
            assertThat(row.get("attempts")).isEqualTo(0);
        }

        @Test
        void releaseOfAnInterruptedRunKeepsTheAttemptAndRetiresOnTheLast() {
            long id = store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 0, 2))).get(0);
            ClaimedJob first = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            assertThat(store.releaseMany(List.of(new JobRelease(id, first.leaseToken(), false))))
                    .containsEntry(new HeldJob(id, first.leaseToken()), JobStatus.PENDING);
            assertThat(row(id).get("attempts")).isEqualTo(1);
            assertThat((String) row(id).get("last_error")).startsWith("interrupted by shutdown of w");
            ClaimedJob second = store.claim("q", "w", 1, Duration.ofMinutes(1)).get(0);
            assertThat(store.releaseMany(List.of(new JobRelease(id, second.leaseToken(), false))))
                    .containsEntry(new HeldJob(id, second.leaseToken()), JobStatus.DEAD);
        }

        @Test
        void batchStatementsSkipARowLockedElsewhereAndHoldersTellItIsStillOurs() throws Exception {
            store.insertMany(List.of(job("q", null), job("q", null)));
            List<ClaimedJob> claimed = store.claim("q", "w", 2, Duration.ofMinutes(1));
            ClaimedJob locked = claimed.get(0);
            ClaimedJob free = claimed.get(1);
            try (java.sql.Connection session = database.dataSource().getConnection()) {
                session.setAutoCommit(false);
                session.createStatement().execute("SELECT * FROM workrow_job WHERE id = " + locked.id() + " FOR UPDATE");

                Set<HeldJob> completed = store.completeMany(List.of(new HeldJob(locked.id(), locked.leaseToken()),
                        new HeldJob(free.id(), free.leaseToken())));
                assertThat(completed).containsExactly(new HeldJob(free.id(), free.leaseToken()));
                assertThat(store.holders(List.of(locked.id())).get(locked.id()).heldBy(locked.leaseToken())).isTrue();
                assertThat(store.renewLeases("test-worker", List.of(new LeaseRenewal(locked.id(), locked.leaseToken(),
                        Duration.ofMinutes(5))))).isEmpty();
                session.rollback();
            }
            assertThat(store.completeMany(List.of(new HeldJob(locked.id(), locked.leaseToken()))))
                    .containsExactly(new HeldJob(locked.id(), locked.leaseToken()));
        }

        @Test
        void renewLeasesMovesEachExpiryByItsOwnLeaseAndIsFenced() {
            store.insertMany(List.of(job("q", null), job("q", null)));
            List<ClaimedJob> claimed = store.claim("q", "w", 2, Duration.ofSeconds(5));
            ClaimedJob a = claimed.get(0);
            ClaimedJob b = claimed.get(1);
            Set<HeldJob> renewed = store.renewLeases("test-worker", List.of(
                    new LeaseRenewal(a.id(), a.leaseToken(), Duration.ofHours(1)),
                    new LeaseRenewal(b.id(), b.leaseToken() + 1, Duration.ofHours(1))));
            assertThat(renewed).containsExactly(new HeldJob(a.id(), a.leaseToken()));
            assertThat(database.jdbc().queryForObject("SELECT tokens FROM workrow_lease_holder WHERE worker = 'test-worker'",
                    java.sql.Array.class)).isNotNull();
            assertThat(database.jdbc().queryForObject("SELECT lease_expires_at > now() + interval '59 minutes'"
                    + " FROM workrow_job WHERE id = ?", Boolean.class, a.id())).isTrue();
            assertThat(database.jdbc().queryForObject("SELECT lease_expires_at < now() + interval '1 minute'"
                    + " FROM workrow_job WHERE id = ?", Boolean.class, b.id())).isTrue();
        }
    }

    @Nested
    class Maintenance {

        @Test
        void sweeperRecoversExpiredLeasesOnlyAndRetiresSpentOnes() {
            long live = store.insertMany(List.of(job("q", null))).get(0);
            long expired = store.insertMany(List.of(job("q", null))).get(0);
            long spent = store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 0, 1))).get(0);
            store.claim("q", "w", 3, Duration.ofMinutes(1));
            database.jdbc().update("UPDATE workrow_job SET lease_expires_at = now() - interval '1 second' WHERE id IN (?, ?)",
                    expired, spent);

            List<MovedJob> moved = store.sweepExpiredLeases(100, List.of(), NO_BACKOFF);

            assertThat(moved).extracting(MovedJob::id).containsExactlyInAnyOrder(expired, spent);
            assertThat(moved).allSatisfy(job -> assertThat(job.previousOwner()).isEqualTo("w"));
            assertThat(row(live).get("status")).isEqualTo("running");
            assertThat(row(expired).get("status")).isEqualTo("pending");
            assertThat(row(expired).get("claimed_by")).isNull();
            assertThat((String) row(expired).get("last_error")).contains("lease expired while held by w");
            assertThat(row(spent).get("status")).isEqualTo("dead");
        }

        @Test
        void retirerMovesPendingJobsWithNoAttemptsLeft() {
            long id = store.insertMany(List.of(job("q", null))).get(0);
            database.jdbc().update("UPDATE workrow_job SET attempts = 3 WHERE id = ?", id);
            assertThat(store.retireExhausted(10)).extracting(MovedJob::id).containsExactly(id);
            assertThat(row(id).get("status")).isEqualTo("dead");
            assertThat(row(id).get("last_error")).isEqualTo("attempts exhausted");
        }

        @Test
        void pruneDeletesOnlyOldFinishedRowsOfTheStatus() {
            long oldDone = store.insertMany(List.of(job("q", null))).get(0);
            long newDone = store.insertMany(List.of(job("q", null))).get(0);
            long oldDead = store.insertMany(List.of(job("q", null))).get(0);
            database.jdbc().update("UPDATE workrow_job SET status = 'completed', finished_at = now() - interval '8 days'"
                    + " WHERE id = ?", oldDone);
            database.jdbc().update("UPDATE workrow_job SET status = 'completed', finished_at = now() WHERE id = ?", newDone);
            database.jdbc().update("UPDATE workrow_job SET status = 'dead', finished_at = now() - interval '8 days'"
                    + " WHERE id = ?", oldDead);

            assertThat(store.pruneFinished(JobStatus.COMPLETED, Duration.ofDays(7), 100)).isEqualTo(1);
            assertThat(database.jdbc().queryForList("SELECT id FROM workrow_job ORDER BY id", Long.class))
                    .containsExactly(newDone, oldDead);
        }
    }
}

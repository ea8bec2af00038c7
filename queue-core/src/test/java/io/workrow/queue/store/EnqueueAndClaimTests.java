package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What the enqueue statements promise the producer (ids in request order, one job per key and
 * queue, due times measured by the database from the statement) and what a plain claim takes: due
 * jobs of its own queue, most urgent priority first, each attempt counted.
 */
class EnqueueAndClaimTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final Duration LEASE = Duration.ofMinutes(1);

    private final WriteOnceStore store = database.writeOnceStore();

    @BeforeEach
    void emptyTables() {
        database.jdbc().execute("TRUNCATE workrow_lease_holder, " + String.join(", ", WriteOnceStore.JOB_TABLES));
    }

    private static NewJob job(String queue, String key) {
        return new NewJob(queue, null, 0, 0, key, "{}", "{}", null, 0, 3);
    }

    @Test
    void idsComeBackInRequestOrder() {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            jobs.add(new NewJob("q", null, i, 0, i % 5 == 0 ? "key-" + i : null, "{\"n\":" + i + "}", "{}", null, 0, 3));
        }
        List<Long> ids = store.insertMany(jobs);
        assertThat(ids).hasSize(50).doesNotHaveDuplicates();
        for (int i = 0; i < 50; i++) {
            assertThat(database.jdbc().queryForObject("SELECT payload->>'n' FROM workrow_job WHERE id = ?",
                    String.class, ids.get(i))).isEqualTo(Integer.toString(i));
        }
    }

    @Test
    void aKeyAlreadyUsedReturnsTheFirstJobAndInsertsNothingButOnAnotherQueueItIsAnotherJob() {
        long first = store.insertMany(List.of(job("q", "once"))).get(0);
        List<Long> again = store.insertMany(List.of(job("q", "once"), job("q", null), job("q", "once")));
        assertThat(again.get(0)).isEqualTo(first);
        assertThat(again.get(2)).isEqualTo(first);
        assertThat(again.get(1)).isNotEqualTo(first);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isEqualTo(2);

        long elsewhere = store.insertMany(List.of(job("other", "once"))).get(0);
        assertThat(elsewhere).isNotEqualTo(first);
    }

    @Test
    void aRunAtIsKeptAsGivenAndADelayCountsFromTheEnqueueingStatementNotItsTransactionsStart() {
        Instant at = Instant.parse("2030-01-01T00:00:00Z");
        long scheduled = store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", at, 0, 3))).get(0);
        assertThat(database.jdbc().queryForObject("SELECT run_at = '2030-01-01T00:00:00Z' FROM workrow_job WHERE id = ?",
                Boolean.class, scheduled)).isTrue();

        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
        long delayed = transactions.execute(status -> {
            database.jdbc().execute("SELECT pg_sleep(0.5)");
            return store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 60_000, 3))).get(0);
        });
        // created_at is the transaction's start; the delay runs from the insert, half a second later.
        assertThat(database.jdbc().queryForObject("SELECT run_at - created_at BETWEEN interval '60.5 seconds'"
                + " AND interval '62 seconds' FROM workrow_job WHERE id = ?", Boolean.class, delayed)).isTrue();
    }

    @Test
    void aClaimTakesDueJobsOfItsQueueMostUrgentFirstAndCountsTheAttempt() {
        long low = store.insertMany(List.of(new NewJob("q", null, 0, 5, null, "{}", "{}", null, 0, 3))).get(0);
        long high = store.insertMany(List.of(new NewJob("q", null, 0, -1, null, "{}", "{}", null, 0, 3))).get(0);
        store.insertMany(List.of(new NewJob("q", null, 0, 0, null, "{}", "{}", null, 3_600_000, 3)));
        store.insertMany(List.of(job("other", null)));

        List<ClaimedPosition> claimed = store.claim("q", "worker-a", 1, LEASE, false);
        assertThat(claimed).extracting(ClaimedPosition::id).containsExactly(high);
        assertThat(claimed.get(0).attempt()).isEqualTo(1);

        List<ClaimedPosition> rest = store.claim("q", "worker-a", 10, LEASE, false);
        assertThat(rest).as("the scheduled job is not due, the other queue's is not ours")
                .extracting(ClaimedPosition::id).containsExactly(low);
        Map<String, Object> row = database.jdbc().queryForMap("SELECT * FROM workrow_job WHERE id = ?", low);
        assertThat(row.get("status")).isEqualTo("running");
        assertThat(row.get("claimed_by")).isEqualTo("worker-a");
        assertThat(row.get("attempts")).isEqualTo(1);
        assertThat(row.get("lease_expires_at")).isNotNull();
        assertThat(rest.get(0).token()).as("each claim its own token").isNotEqualTo(claimed.get(0).token());
    }
}

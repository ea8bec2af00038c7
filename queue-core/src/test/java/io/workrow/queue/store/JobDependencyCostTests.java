package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The settle of a job's end ({@code workrow_settle}) reads its own edges and its own waiters, not
 * the workflow's: the buffers it touches (EXPLAIN ANALYZE, rolled back) grow with its own
 * dependents, and beside 200,000 other waiting jobs and edges only by the level the primary keys
 * gain (each dependent is a handful of index probes, one page deeper in a larger tree), never with
 * the others' number: 1,317 buffers for 100 dependents alone, 2,305 beside them, when measured.
 */
class JobDependencyCostTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final long FOREIGN = 200_000;

    /** Job {@code dep} with {@code dependents} waiting jobs, ids from {@code firstWaiter}, each waiting for it alone. */
    private static void waitersOf(long dep, long firstWaiter, int dependents) {
        JdbcTemplate jdbc = database.jdbc();
        jdbc.update("""
                INSERT INTO workrow_waiting (id, queue, priority, run_at, max_attempts, partition_bucket, deps_left)
                SELECT w, 'reports', 0, now(), 5, 0, 1 FROM generate_series(?::bigint, ?::bigint) AS w
                """, firstWaiter, firstWaiter + dependents - 1);
        jdbc.update("""
                INSERT INTO workrow_dependency (dep_id, waiter_id, settled)
                SELECT ?, w, false FROM generate_series(?::bigint, ?::bigint) AS w
                """, dep, firstWaiter, firstWaiter + dependents - 1);
    }

    private static int settleBuffers(long dep) throws Exception {
        return ClaimCost.buffers(database, JobSql.render(JobSql.JOB_SETTLE, database.schema())
                .replace("?::bigint[]", "ARRAY[" + dep + "]::bigint[]").replace("?::text[]", "ARRAY['completed']"));
    }

    @Test
    void aJobsSettleReadsItsOwnDependentsWhateverElseWaits() throws Exception {
        waitersOf(1, 1_000, 10);
        waitersOf(2, 2_000, 100);
        int tenAlone = settleBuffers(1);
        int hundredAlone = settleBuffers(2);

        // Two hundred thousand other jobs, each waiting for a job of its own.
        database.jdbc().update("""
                INSERT INTO workrow_waiting (id, queue, priority, run_at, max_attempts, partition_bucket, deps_left)
                SELECT w, 'reports', 0, now(), 5, 0, 1 FROM generate_series(1000000, 1000000 + ? - 1) AS w
                """, FOREIGN);
        database.jdbc().update("""
                INSERT INTO workrow_dependency (dep_id, waiter_id, settled)
                SELECT w + 5000000, w, false FROM generate_series(1000000, 1000000 + ? - 1) AS w
                """, FOREIGN);
        database.jdbc().execute("VACUUM ANALYZE workrow_waiting, workrow_dependency");
        int tenBeside = settleBuffers(1);
        int hundredBeside = settleBuffers(2);

        assertThat(tenBeside).as("10 dependents beside %d others (alone: %d)", FOREIGN, tenAlone)
                .isLessThanOrEqualTo(tenAlone * 2);
        assertThat(hundredBeside).as("100 dependents beside %d others (alone: %d)", FOREIGN, hundredAlone)
                .isLessThanOrEqualTo(hundredAlone * 2).isLessThan(100 * 30);
        assertThat(hundredBeside).as("grows with its own dependents (10: %d)", tenBeside)
                .isGreaterThan(tenBeside * 3);
    }
}

package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The settle of a job's end ({@code workrow_settle}) reads its own edges and its own waiters, not
 * the workflow's: the buffers it touches (EXPLAIN ANALYZE, rolled back) grow with its own
 * dependents, and are about the same beside 400,000 other waiting jobs and edges as beside
 * 200,000 (from none to the first 200,000 the primary keys gain levels: each dependent is a
 * handful of index probes, a page or two deeper). It prints its figures; docs/performance.md,
 * "Workflows", has one run.
 */
class JobDependencyCostTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final long FOREIGN = 400_000;

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

    /** Adds {@code count} waiting jobs from {@code first} on, each waiting for a job of its own. */
    private static void others(long first, long count) {
        database.jdbc().update("""
                INSERT INTO workrow_waiting (id, queue, priority, run_at, max_attempts, partition_bucket, deps_left)
                SELECT w, 'reports', 0, now(), 5, 0, 1 FROM generate_series(?::bigint, ?::bigint) AS w
                """, first, first + count - 1);
        database.jdbc().update("""
                INSERT INTO workrow_dependency (dep_id, waiter_id, settled)
                SELECT w + 5000000, w, false FROM generate_series(?::bigint, ?::bigint) AS w
                """, first, first + count - 1);
        database.jdbc().execute("VACUUM ANALYZE workrow_waiting, workrow_dependency");
    }

    @Test
    void aJobsSettleReadsItsOwnDependentsWhateverElseWaits() throws Exception {
        waitersOf(1, 1_000, 10);
        waitersOf(2, 2_000, 100);
        settleBuffers(1); // the first call of a session plans the function's statements: not counted
        int tenAlone = settleBuffers(1);
        int hundredAlone = settleBuffers(2);
        others(1_000_000, FOREIGN / 2);
        int tenBesideHalf = settleBuffers(1);
        int hundredBesideHalf = settleBuffers(2);
        others(1_000_000 + FOREIGN / 2, FOREIGN / 2);
        int tenBeside = settleBuffers(1);
        int hundredBeside = settleBuffers(2);
        System.out.printf("settle buffers: 10 dependents %d alone, %d beside %,d others, %d beside %,d;"
                + " 100 dependents %d, %d, %d%n", tenAlone, tenBesideHalf, FOREIGN / 2, tenBeside, FOREIGN,
                hundredAlone, hundredBesideHalf, hundredBeside);

        // From none to the first half the primary keys gain levels; doubling the others then
        // changes nothing that grows with them. A read of the others' edges alone would take over
        // 2,000 pages.
        assertThat(tenBeside).as("10 dependents beside %,d others (%d beside half)", FOREIGN, tenBesideHalf)
                .isLessThan(1_000);
        assertThat(hundredBeside).as("100 dependents beside %,d others (%d beside half)", FOREIGN, hundredBesideHalf)
                .isLessThanOrEqualTo(hundredBesideHalf + hundredBesideHalf / 10).isLessThan(100 * 30);
        assertThat(hundredBeside).as("grows with its own dependents (10: %d)", tenBeside)
                .isGreaterThan(tenBeside * 3);
    }
}

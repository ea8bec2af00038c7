package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every statement of {@link JobSql} against a million jobs, planned both as a custom plan (values
 * known) and as the generic plan a prepared statement falls back to after five runs: each must be
 * served by the index its comment names, never by a scan of the whole table. A statement added to
 * JobSql without an entry here fails {@link #everyStatementHasAPlanCheck()}.
 */
class QueryPlanTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = WorkrowTestDatabase.withRowPerJobLayout();

    private static final int ROWS = 1_000_000;

    /** Statements that are not about workrow_job rows, or read the whole table by design. */
    private static final Map<String, String> EXEMPT = Map.ofEntries(
            Map.entry("JOB_TABLE_CHECK", "LIMIT 0: planned, never executed"),
            Map.entry("JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS", "an insert without ON CONFLICT reads no index"),
            Map.entry("QUEUE_PAUSE", "workrow_queue_pause, one row per paused queue"),
            Map.entry("QUEUE_RESUME", "workrow_queue_pause"),
            Map.entry("QUEUE_PAUSED", "workrow_queue_pause"),
            Map.entry("DATABASE_NOW", "reads no table"),
            Map.entry("LEASE_HOLDER_FORGET", "workrow_lease_holder, one row per runtime holding jobs"),
            Map.entry("JOB_CLAIM_ORDERED", "named parameters; its reads are measured at 110,000 rows by OrderedClaimTests"),
            Map.entry("JOB_CLAIM_WEIGHTED", "named parameters; its reads are measured at 1,000 keys by FairClaimTests"),
            Map.entry("JOB_CLAIM_BURST", "named parameters; its reads are measured at 1,000 keys by FairClaimTests"),
            Map.entry("JOB_CLAIM_SPACED", "named parameters; its reads are measured at 1,000 keys by FairClaimTests"));

    private static final Map<String, PlanCheck> CHECKS = new LinkedHashMap<>();

    static {
        String ids = "'{1,2,3}'";
        CHECKS.put("JOB_INSERT_MANY", new PlanCheck(
                "text[], text[], int[], int[], text[], text[], text[], text[], bigint[], int[], text[]",
                "'{q1}', '{null}', '{0}', '{0}', '{key-1}', '{\"{}\"}', '{\"{}\"}', '{null}', '{0}', '{5}', '{null}'",
                Set.of("workrow_job_idempotency_idx")));
        CHECKS.put("JOB_INSERT_ONE", new PlanCheck(
                "text, text, smallint, smallint, text, jsonb, jsonb, timestamptz, bigint, int, text",
                "'q1', null, 0, 0, 'key-1', '{}', '{}', null, 0, 5, null",
                Set.of("workrow_job_idempotency_idx")));
        CHECKS.put("JOB_FIND_BY_IDEMPOTENCY_KEYS", new PlanCheck("text[], text[]", "'{q1}', '{key-1}'",
                Set.of("workrow_job_idempotency_idx")));
        CHECKS.put("JOB_CLAIM", new PlanCheck("text, boolean, text, text, int, text, int, int, text, bigint",
                "'q1', false, 'q1', 'q1', 16, 'q1', 16, 16, 'w', 300000",
                Set.of("workrow_job_unkeyed_claim_idx", "workrow_job_keyed_claim_idx"), true));
        CHECKS.put("JOB_COMPLETE_MANY", new PlanCheck("bigint[], bigint[]", ids + ", " + ids, Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_COMPLETE", new PlanCheck("bigint, bigint", "1, 1", Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_FAIL_MANY", new PlanCheck("bigint[], bigint[], text[], bigint[], boolean[]",
                ids + ", " + ids + ", '{a,b,c}', '{1,2,3}', '{f,f,t}'", Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_HOLDERS", new PlanCheck("bigint[]", ids, Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_RENEW_LEASES", new PlanCheck("text, bigint, bigint[], text, bigint[], bigint[], bigint[]",
                "'w', 60000, " + ids + ", 'w', " + ids + ", " + ids + ", " + ids, Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_EXTEND_LEASE", new PlanCheck("bigint, bigint, bigint", "60000, 1, 1", Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_SAVE_STEP", new PlanCheck("text, bigint, bigint", "'s', 1, 1", Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_RELEASE_MANY", new PlanCheck("bigint[], bigint[], boolean[]", ids + ", " + ids + ", '{t,f,t}'",
                Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_SWEEP_EXPIRED_LEASES", new PlanCheck(
                "int, text[], bigint[], float8[], bigint[], float8[], int[], int, bigint, bigint, float8, float8",
                "1000, '{q1}', '{1000}', '{2.0}', '{60000}', '{0.2}', '{0}', 0, 3600000, 1000, 2.0, 0.2",
                Set.of("workrow_job_lease_idx")));
        CHECKS.put("JOB_PROMOTE_SCHEDULED", new PlanCheck("int", "1000", Set.of("workrow_job_scheduled_idx")));
        CHECKS.put("JOB_RETIRE_EXHAUSTED", new PlanCheck("int", "1000", Set.of("workrow_job_exhausted_idx")));
        CHECKS.put("JOB_PRUNE_FINISHED", new PlanCheck("text, bigint, int", "'completed', 604800000, 1000",
                Set.of("workrow_job_finished_idx")));
        // The keyed pending arm may read either index of keyed pending rows (claim or fair claim):
        // both are led by queue; the check against scans of the table covers it.
        CHECKS.put("QUEUE_DEPTH", new PlanCheck("", "", Set.of("workrow_job_unkeyed_claim_idx", "workrow_job_scheduled_queue_idx",
                "workrow_job_lease_idx", "workrow_job_dead_idx"), true));
        CHECKS.put("JOB_LIST_RUNNING", new PlanCheck("text, text, int", "'q1', 'q1', 100", Set.of("workrow_job_lease_idx")));
        CHECKS.put("JOB_LIST_DEAD", new PlanCheck("text, text, text, text, int", "'q1', 'q1', 'boom', 'boom', 100",
                Set.of("workrow_job_finished_idx", "workrow_job_dead_idx")));
        CHECKS.put("JOB_RETRY_DEAD", new PlanCheck("bigint[], bigint[], text, text, text, text, text, text, timestamptz, int",
                ids + ", " + ids + ", 'q1', 'q1', null, null, null, null, now(), 5000", Set.of("workrow_job_pkey", "workrow_job_dead_idx")));
        CHECKS.put("JOB_RETRY_DEAD (by queue and error)", new PlanCheck("bigint[], bigint[], text, text, text, text, text, text, timestamptz, int",
                "null, null, 'q1', 'q1', 'boom', 'boom', null, null, now(), 5000", Set.of("workrow_job_dead_idx")));
        CHECKS.put("JOB_RETRY_DEAD (by queue and kind)", new PlanCheck("bigint[], bigint[], text, text, text, text, text, text, timestamptz, int",
                "null, null, 'q1', 'q1', null, null, 'boom', 'boom', now(), 5000",
                Set.of("workrow_job_dead_idx", "workrow_job_dead_kind_idx")));
        CHECKS.put("JOB_CANCEL", new PlanCheck("bigint, text", "1, 'q1'", Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_DEAD_ERROR_GROUPS", new PlanCheck("int, int", "10000, 50",
                Set.of("workrow_job_finished_idx", "workrow_job_dead_kind_idx"), true));
        CHECKS.put("JOB_DEAD_ERROR_GROUPS_OF_QUEUE", new PlanCheck("text, text, text, int, int", "'q1', 'q1', 'q1', 10000, 50",
                Set.of("workrow_job_dead_idx", "workrow_job_dead_kind_idx"), true));
        CHECKS.put("JOB_CANCEL_DEAD", new PlanCheck("bigint[], bigint[], text, text, text, timestamptz, int", ids + ", " + ids
                + ", 'q1', null, null, now(), 5000", Set.of("workrow_job_pkey", "workrow_job_dead_idx", "workrow_job_dead_kind_idx")));
        CHECKS.put("JOB_CANCEL_DEAD (by kind)", new PlanCheck("bigint[], bigint[], text, text, text, timestamptz, int",
                "null, null, 'q1', 'boom 1', 'boom 1', now(), 5000", Set.of("workrow_job_dead_idx", "workrow_job_dead_kind_idx")));
        CHECKS.put("JOB_FIND", new PlanCheck("bigint", "1", Set.of("workrow_job_pkey")));
        CHECKS.put("JOB_FINISHED_PER_MINUTE", new PlanCheck("timestamptz", "now() - interval '1 hour'",
                Set.of("workrow_job_finished_idx")));
    }

    @BeforeAll
    static void fillAMillionJobs() {
        // 85% completed, 5% scheduled (due within the day), 5% pending, 2% running, 2% dead, 1% cancelled.
        database.jdbc().execute("""
                INSERT INTO workrow_job (queue, partition_bucket, priority, payload, status, run_at, attempts,
                                         max_attempts, claimed_by, lease_expires_at, lease_token, finished_at,
                                         last_error, idempotency_key)
                SELECT 'q' || (i % 10), i % 1024, i % 3, '{}', kind.status,
                       CASE WHEN kind.status = 'scheduled' THEN now() + (i % 86400) * interval '1 second'
                            ELSE now() - (i % 86400) * interval '1 second' END,
                       1, 5,
                       CASE WHEN kind.status IN ('running', 'completed', 'dead') THEN 'w' END,
                       CASE WHEN kind.status = 'running' THEN now() + interval '5 minutes' END,
                       CASE WHEN kind.status = 'running' THEN i END,
                       CASE WHEN kind.status IN ('completed', 'dead', 'cancelled')
                            THEN now() - (i % 1000000) * interval '1 second' END,
                       CASE WHEN kind.status = 'dead' THEN 'boom ' || i END,
                       CASE WHEN i % 2 = 0 THEN 'key-' || i END
                FROM generate_series(1, {rows}) AS i
                CROSS JOIN LATERAL (SELECT CASE WHEN i % 100 < 85 THEN 'completed' WHEN i % 100 < 90 THEN 'scheduled'
                                                WHEN i % 100 < 95 THEN 'pending' WHEN i % 100 < 97 THEN 'running'
                                                WHEN i % 100 < 99 THEN 'dead' ELSE 'cancelled' END AS status) AS kind
                """.replace("{rows}", Integer.toString(ROWS)));
        database.jdbc().execute("VACUUM ANALYZE workrow_job");
    }

    @Test
    void everyStatementHasAPlanCheck() {
        for (String name : PlanExplain.statementNames(JobSql.class)) {
            assertThat(CHECKS.containsKey(name) || EXEMPT.containsKey(name))
                    .as("JobSql.%s has no plan check", name).isTrue();
        }
    }

    @Test
    void everyStatementIsServedByItsIndexInCustomAndGenericPlans() throws Exception {
        List<String> failures = new ArrayList<>();
        try (Connection connection = database.dataSource().getConnection()) {
            for (Map.Entry<String, PlanCheck> entry : CHECKS.entrySet()) {
                String field = entry.getKey().split(" ")[0];
                String sql = JobSql.render((String) JobSql.class.getDeclaredField(field).get(null), database.schema());
                for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
                    String plan = explain(connection, sql, entry.getValue(), mode);
                    if (plan.contains("Seq Scan on workrow_job")) {
                        failures.add(entry.getKey() + " (" + mode + ") scans the table:\n" + plan);
                    }
                    PlanCheck check = entry.getValue();
                    long used = check.indexes().stream().filter(plan::contains).count();
                    if (check.all() ? used < check.indexes().size() : used == 0) {
                        failures.add(entry.getKey() + " (" + mode + ") does not use " + (check.all() ? "all of " : "one of ")
                                + check.indexes() + ":\n" + plan);
                    }
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    /**
     * The statements by kind of error find a kind through workrow_job_dead_kind_idx: the kind is an
     * index condition, which holds only while JobSql's ERROR_KIND and V10's expression are the same.
     */
    @Test
    void theKindOfErrorIsAnIndexConditionOfTheDeadKindIndex() throws Exception {
        List<String> failures = new ArrayList<>();
        try (Connection connection = database.dataSource().getConnection()) {
            for (String name : List.of("JOB_DEAD_ERROR_GROUPS", "JOB_DEAD_ERROR_GROUPS_OF_QUEUE",
                    "JOB_RETRY_DEAD (by queue and kind)", "JOB_CANCEL_DEAD (by kind)")) {
                String sql = JobSql.render((String) JobSql.class.getDeclaredField(name.split(" ")[0]).get(null),
                        database.schema());
                String plan = explain(connection, sql, CHECKS.get(name), "force_custom_plan");
                boolean kindIsACondition = plan.lines().anyMatch(line -> line.contains("Index Cond:")
                        && line.contains("CASE WHEN (last_error IS NULL)"));
                if (!plan.contains("workrow_job_dead_kind_idx") || !kindIsACondition) {
                    failures.add(name + " does not find the kind through workrow_job_dead_kind_idx:\n" + plan);
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void aClaimReadsAsMuchWithAHundredThousandJobsScheduledAheadOfItAsWithout() throws Exception {
        int before = claimBuffers();
        // 100,000 jobs of the same queue, at a better priority, due later.
        database.jdbc().execute("""
                INSERT INTO workrow_job (queue, partition_bucket, priority, payload, status, run_at, max_attempts)
                SELECT 'q1', 0, -1, '{}', 'scheduled', now() + interval '1 hour', 5
                FROM generate_series(1, 100000)
                """);
        database.jdbc().execute("ANALYZE workrow_job");
        int after = claimBuffers();
        System.out.printf("claim of 16 jobs: %d buffers read with 0, %d with 100,000 jobs scheduled ahead%n",
                before, after);
        assertThat(after).isLessThanOrEqualTo(before + 10);

        // The same jobs kept pending with a future run_at, as before the scheduled status: the
        // claim walks all of them first. Kept as the measurement that shows why.
        database.jdbc().update("UPDATE workrow_job SET status = 'pending' WHERE priority = -1");
        database.jdbc().execute("ANALYZE workrow_job");
        int pendingAhead = claimBuffers();
        System.out.printf("claim of 16 jobs: %d buffers read with 100,000 future jobs kept pending%n", pendingAhead);
        assertThat(pendingAhead).isGreaterThan(after * 3);
        database.jdbc().update("DELETE FROM workrow_job WHERE priority = -1");
    }

    /** Shared buffers one claim of 16 touches, from EXPLAIN (ANALYZE, BUFFERS), rolled back. */
    private static int claimBuffers() throws SQLException {
        String sql = JobSql.render(JobSql.JOB_CLAIM, database.schema());
        // Highest first, so that $1 does not match the start of $10.
        return ClaimCost.buffers(database, PlanExplain.numbered(sql).replace("$10", "300000").replace("$9", "'w'")
                .replace("$8", "16").replace("$7", "16").replace("$6", "'q1'").replace("$5", "16")
                .replace("$4", "'q1'").replace("$3", "'q1'").replace("$2", "false").replace("$1", "'q1'"));
    }

    private static String explain(Connection connection, String sql, PlanCheck check, String mode) throws SQLException {
        return PlanExplain.explain(connection, sql, check.types(), check.arguments(), mode);
    }
}

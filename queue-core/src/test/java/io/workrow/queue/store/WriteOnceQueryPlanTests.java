package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every statement of {@link JobSql} against a million jobs in their homes, planned both as
 * a custom plan (values known) and as the generic plan a prepared statement falls back to after
 * five runs: each must be served by the indexes its comment names, never by a sequential scan of
 * a table that holds jobs. A statement added to JobSql without an entry here fails
 * {@link #everyStatementHasAPlanCheck()}.
 */
class WriteOnceQueryPlanTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final int ROWS = 1_000_000;

    /**
     * The outcome log's whole days the fill spreads the finished jobs over, ending at today's
     * midnight (UTC): every day's partition holds the same share, whatever the time the test runs
     * at (a partial first day of a few thousand rows is read whole by the planner, rightly).
     */
    private static final int DAYS = 12;

    /** When job {@code i} finished: ids grow with time, as the outcome log's BRIN expects. */
    private static final String FINISHED = "date_trunc('day', now(), 'UTC') - ({rows} + 1 - i) * (interval '"
            + DAYS + " days' / {rows})";

    /**
     * The job data's range that V13 creates from id 1 on a fresh database, and that the million ids
     * fill; an id lookup in any other range reads an empty partition.
     */
    private static final String JOB_DATA_PKEY = "workrow_job_data_1_pkey";

    /** workrow_outcome_brin as each day's partition has it: PostgreSQL names it when the day is attached. */
    private static final String OUTCOME_BRIN = "_finished_at_job_id_claim_token_idx";

    /**
     * The tables a job lives in, its idempotency keys and its deadline: a sequential scan of any of them, or of
     * one of their partitions that holds jobs here, fails the check. Not workrow_claim: it holds
     * the claims in flight, never history (1,250 rows here for 20,000 running jobs, one per batch),
     * and only its primary key is indexed, so that renewals and ends, which update every claim
     * row, stay HOT; a statement that looks for a running job by id or lease reads what runs.
     */
    private static final Pattern HOMES = Pattern.compile(
            "workrow_(job_data|outcome|ready|scheduled|dead|job_key|waiting|dependency|deadline)(_\\w+)?");

    /**
     * Statements that count every job of a home by design, and so may read it whole: the depth
     * gauges count every waiting and dead job per queue, however they read them.
     */
    private static final Map<String, Set<String>> READS_WHOLE = Map.of(
            "QUEUE_DEPTH", Set.of("workrow_ready", "workrow_scheduled", "workrow_dead", "workrow_waiting"));

    private static final Pattern SEQ_SCAN = Pattern.compile("Seq Scan on (\\w+)");

    /**
     * The relations of {@link #HOMES} that hold rows after the fill. The partitions left empty are
     * read whole where a plan reads them at all, since reading nothing costs nothing, and that is no
     * failure: the default partitions stay near empty by design (V13 moves a day's or a range's
     * rows out when it creates the partition), the days and the id range ahead are empty until time
     * and ids reach them, and the old table's range is empty on a fresh database. Each partition is
     * planned by its own statistics, so one that fills is planned as the full ones are here.
     */
    private static final Set<String> tablesWithJobs = new HashSet<>();

    /** Statements that are not about jobs' rows, or that are planned where EXPLAIN does not see. */
    private static final Map<String, String> EXEMPT = Map.ofEntries(
            Map.entry("JOB_TABLE_CHECK", "LIMIT 0: planned, never executed"),
            Map.entry("JOB_INSERT_MANY_WITHOUT_IDEMPOTENCY_KEYS", "an insert without ON CONFLICT reads no index"),
            Map.entry("OUTCOME_DAYS_ADD", "calls workrow_add_outcome_day, whose statements are planned inside it;"
                    + " it moves one day of the default partition, near empty by design"),
            Map.entry("OUTCOME_DAYS_EXPIRED", "reads the catalogue (pg_class), one row per relation of the schema"),
            Map.entry("OUTCOME_DAY_DETACH", "calls workrow_detach_outcome_day: DDL on one day of the outcome log"),
            Map.entry("OUTCOME_DEFAULT_PRUNE", "the outcome log's default partition, near empty by design, read whole"),
            Map.entry("OUTCOME_DAY_DROP", "calls workrow_drop_outcome_day: drops one detached day of the outcome log"),
            Map.entry("JOB_DATA_EXTEND", "calls workrow_extend_job_data, which reads the catalogue and moves the"
                    + " default partition's rows of the new range"),
            Map.entry("JOB_DATA_RETIRE", "calls workrow_retire_job_data, which drops whole ranges; its statements"
                    + " are planned inside it"),
            Map.entry("JOB_CLAIM_ORDERED", "named parameters; its reads are measured by OrderedClaimTests"),
            Map.entry("JOB_CLAIM_WEIGHTED", "named parameters; its reads are measured at 1,000 keys by FairClaimTests"),
            Map.entry("JOB_CLAIM_KEY_CAPPED", "named parameters; its keys are found by the loose scan of"
                    + " workrow_ready_key_pending_idx that JOB_CLAIM_ORDERED's heads use, and each key's jobs by"
                    + " that index's prefix; run by GlobalConcurrencyTests"),
            Map.entry("JOB_CLAIM_BURST", "named parameters; its reads are measured at 1,000 keys by FairClaimTests"),
            Map.entry("JOB_CLAIM_SPACED", "named parameters; its reads are measured at 1,000 keys by FairClaimTests"),
            Map.entry("QUEUE_PAUSE", "workrow_queue_pause, one row per paused queue"),
            Map.entry("QUEUE_RESUME", "workrow_queue_pause"),
            Map.entry("QUEUE_PAUSED", "workrow_queue_pause"),
            Map.entry("LEASE_HOLDER_FORGET", "workrow_lease_holder, one row per runtime holding jobs"),
            Map.entry("JOB_SETTLE", "calls workrow_settle, whose statements are planned inside it: each reads"
                    + " workrow_dependency by its primary key's prefix (dep_id) and workrow_waiting by its primary"
                    + " key, measured by JobDependencyCostTests"),
            Map.entry("JOB_SETTLE_MEMBERS", "calls workrow_settle as JOB_SETTLE does, with the batches given"));

    private static final Map<String, PlanCheck> CHECKS = new LinkedHashMap<>();

    static {
        // Jobs of the fill (see fillAMillionJobs), all of queue q0: 1 completed, 85 scheduled, 90
        // ready, 97, 98 and 197 dead; 95 and 96 running at positions 1 and 2 of claim 1, 895 at
        // position 1 of claim 2.
        String tokens = "'{1,1,2}'";
        String positions = "'{1,2,1}'";
        String running = "'{95,96,895}'";
        String dead = "'{97,98,197}'";
        // Reads no table: a taken key is found by the insert into workrow_job_key's primary key
        // (ON CONFLICT DO NOTHING names no arbiter index for the plan to show).
        CHECKS.put("JOB_INSERT_MANY", new PlanCheck(
                "text[], text[], int[], int[], text[], text[], text[], text[], bigint[], int[], text[], timestamptz[],"
                        + " bigint[]",
                "'{q1}', '{null}', '{0}', '{0}', '{key-2}', '{\"{}\"}', '{\"{}\"}', '{null}', '{0}', '{5}', '{null}',"
                        + " '{null}', '{null}'",
                Set.of(), true));
        CHECKS.put("JOB_FIND_BY_IDEMPOTENCY_KEYS", new PlanCheck("text[], text[]", "'{q0}', '{key-2}'",
                Set.of("workrow_job_key_pkey")));
        CHECKS.put("JOB_KEYS_LOCK", new PlanCheck("text[], text[]", "'{q0}', '{key-2}'",
                Set.of("workrow_job_key_pkey")));
        // The key's job looked up in each home by id; a running one among the claim rows.
        CHECKS.put("JOB_KEYS_RELEASE", new PlanCheck("text[], text[], text[]", "'{q0}', '{key-2}', '{active}'",
                Set.of("workrow_job_key_pkey", "workrow_ready_id_idx", "workrow_scheduled_id_idx",
                        "workrow_waiting_pkey"), true));
        CHECKS.put("JOB_REPLACE_WAITING", new PlanCheck(
                "text[], text[], text[], text[], text[], bigint[], timestamptz[], bigint[], int[]",
                "'{q0}', '{key-2}', '{\"{}\"}', '{\"{}\"}', '{null}', '{0}', '{null}', '{null}', '{1}'",
                Set.of("workrow_job_key_pkey", "workrow_ready_id_idx", "workrow_scheduled_id_idx",
                        "workrow_waiting_pkey"), true));
        CHECKS.put("JOB_CLAIM", new PlanCheck("text, boolean, text, text, text, text, int, text, int, int, text, bigint",
                "'q1', false, 'q1', 'q1', 'q1', 'q1', 16, 'q1', 16, 16, 'w', 300000",
                Set.of("workrow_ready_unkeyed_claim_idx", "workrow_ready_keyed_claim_idx", JOB_DATA_PKEY), true));
        CHECKS.put("JOB_END_MANY", new PlanCheck(
                "bigint[], int[], bigint[], int[], int[], int[], text[], text[], bigint[], int[], timestamptz[],"
                        + " text[], timestamptz[], text[], int[], bigint[]",
                tokens + ", " + positions + ", " + running + ", '{1,1,1}', '{5,5,5}', '{0,0,0}',"
                        + " '{completed,failed,expired}', '{null,boom,null}', '{0,1000,0}', '{0,0,0}',"
                        + " '{null,null,null}', '{null,null,null}', '{null,null,null}', '{\"{}\",null,null}', '{0,0,0}',"
                        + " '{1,2}'",
                Set.of("workrow_claim_pkey", JOB_DATA_PKEY, OUTCOME_BRIN), true));
        CHECKS.put("JOB_COMPLETE_MANY", new PlanCheck(
                "bigint[], int[], bigint[], int[], int[], timestamptz[], text[], timestamptz[], text[], bigint[]",
                tokens + ", " + positions + ", " + running + ", '{1,1,1}', '{0,0,0}', '{null,null,null}',"
                        + " '{null,null,null}', '{null,null,null}', '{\"{}\",null,null}', '{1,2}'",
                Set.of("workrow_claim_pkey", OUTCOME_BRIN), true));
        CHECKS.put("JOB_COMPLETE_MANY_SETTLING", new PlanCheck(
                "bigint[], int[], bigint[], int[], int[], timestamptz[], text[], timestamptz[], text[], bigint[]",
                tokens + ", " + positions + ", " + running + ", '{1,1,1}', '{0,0,0}', '{null,null,null}',"
                        + " '{null,null,null}', '{null,null,null}', '{null,null,null}', '{1,2}'",
                Set.of("workrow_claim_pkey", OUTCOME_BRIN), true));
        CHECKS.put("JOB_COMPLETE_IN_TRANSACTION", new PlanCheck(
                "bigint[], int[], bigint[], int[], int[], timestamptz[], text[], timestamptz[], text[], bigint[]",
                "'{1}', '{1}', '{95}', '{1}', '{0}', '{null}', '{null}', '{null}', '{null}', '{1}'", Set.of("workrow_claim_pkey", OUTCOME_BRIN), true));
        CHECKS.put("JOB_RENEW_LEASES", new PlanCheck("text, bigint, bigint[], text, bigint[], bigint[], text",
                "'w', 60000, '{1,2,3}', 'w', '{1,2,3}', '{300000,300000,300000}', 'w'",
                Set.of("workrow_claim_pkey")));
        CHECKS.put("JOB_SWEEP_EXPIRED_LEASES", new PlanCheck(
                "int, text[], bigint[], float8[], bigint[], float8[], int[], int, bigint, bigint, float8, float8",
                "1000, '{q1}', '{1000}', '{2.0}', '{60000}', '{0.2}', '{0}', 0, 3600000, 1000, 2.0, 0.2",
                Set.of("workrow_claim_pkey", JOB_DATA_PKEY), true));
        CHECKS.put("JOB_CANCEL", new PlanCheck("bigint, text, bigint, text, bigint, text, bigint, text, bigint, bigint",
                "90, 'q0', 90, 'q0', 90, 'q0', 90, 'q0', 90, 90",
                Set.of("workrow_ready_id_idx", "workrow_scheduled_id_idx", "workrow_waiting_pkey"), true));
        CHECKS.put("QUEUE_HAS_READY", new PlanCheck("text, text", "'q0', 'q0'",
                Set.of("workrow_ready_unkeyed_claim_idx", "workrow_ready_keyed_claim_idx"), true));
        CHECKS.put("JOB_CANCEL_PAST_DEADLINE", new PlanCheck("int, bigint", "1000, 30000",
                Set.of("workrow_deadline_pkey", JOB_DATA_PKEY, "workrow_ready_id_idx", "workrow_scheduled_id_idx",
                        "workrow_waiting_pkey"), true));
        CHECKS.put("JOB_LIVE_STATUS", new PlanCheck("bigint, bigint, bigint, bigint, bigint, bigint, bigint",
                "90, 90, 90, 90, 90, 90, 90",
                Set.of("workrow_ready_id_idx", "workrow_scheduled_id_idx", "workrow_dead_pkey", "workrow_waiting_pkey"),
                true));
        // Waiting jobs: 1,000,001 to 1,009,999 each wait for two running jobs (see fillAMillionJobs).
        CHECKS.put("JOB_DEPENDENCIES_GONE", new PlanCheck("bigint[], timestamptz",
                "'{1,85,90,95,97,99}', now() - interval '2 days'", Set.of("workrow_ready_id_idx",
                        "workrow_scheduled_id_idx", "workrow_waiting_pkey", "workrow_dead_pkey", OUTCOME_BRIN), true));
        CHECKS.put("JOB_DEPENDENCIES_CHECK", new PlanCheck("bigint[]", "'{95,96,12345678}'", Set.of(JOB_DATA_PKEY)));
        CHECKS.put("JOB_INSERT_MANY_AFTER", new PlanCheck(
                "text[], text[], int[], int[], text[], text[], text[], text[], bigint[], int[], text[], timestamptz[],"
                        + " bigint[], bigint[], bigint[], boolean[], timestamptz",
                // A fan-in of 10,000: the statement must stay cheap enough not to be compiled.
                "'{q1}', '{null}', '{0}', '{0}', '{null}', '{\"{}\"}', '{\"{}\"}', '{null}', '{0}', '{5}', '{null}',"
                        + " '{null}', '{null}',"
                        + " '{" + "1,".repeat(9_999) + "1}', '{" + java.util.stream.IntStream.rangeClosed(1, 10_000)
                        .mapToObj(Integer::toString).collect(java.util.stream.Collectors.joining(",")) + "}', '{"
                        + "true,".repeat(9_999) + "false}', now() - interval '2 days'",
                Set.of("workrow_dead_pkey", OUTCOME_BRIN), true));
        CHECKS.put("JOB_END_MANY_SETTLING", new PlanCheck(
                "bigint[], int[], bigint[], int[], int[], int[], text[], text[], bigint[], int[], timestamptz[],"
                        + " text[], timestamptz[], text[], int[], bigint[]",
                tokens + ", " + positions + ", " + running + ", '{1,1,1}', '{5,5,5}', '{0,0,0}',"
                        + " '{completed,failed,discarded}', '{null,boom,gone}', '{0,1000,0}', '{0,0,0}',"
                        + " '{null,null,null}', '{null,null,null}', '{null,null,null}', '{null,null,null}', '{0,0,0}',"
                        + " '{1,2}'",
                Set.of("workrow_claim_pkey", JOB_DATA_PKEY, OUTCOME_BRIN), true));
        CHECKS.put("JOB_DEPENDENCIES", new PlanCheck("bigint", "1000001", Set.of(JOB_DATA_PKEY)));
        CHECKS.put("JOB_LIST_WAITING", new PlanCheck("text, text, int", "'q1', 'q1', 100",
                Set.of("workrow_waiting_pkey", "workrow_waiting_queue_idx")));
        CHECKS.put("JOB_WAITS_FOR", new PlanCheck("int, bigint", "100, 1000001", Set.of(JOB_DATA_PKEY)));
        CHECKS.put("JOB_WAITED_ON_BY", new PlanCheck("bigint, bigint, int", "95, 95, 100",
                Set.of("workrow_dependency_pkey", "workrow_waiting_pkey"), true));
        // Writes a batch row and its callbacks; reads no home.
        CHECKS.put("BATCH_OPEN", new PlanCheck(
                "text[], text[], int[], int[], text[], text[], text[], text[], bigint[], int[], text[], timestamptz[],"
                        + " bigint[], text[]",
                "'{q1}', '{null}', '{0}', '{0}', '{null}', '{\"{}\"}', '{\"{}\"}', '{null}', '{0}', '{5}', '{null}',"
                        + " '{null}', '{null}', '{finish}'", Set.of(), true));
        CHECKS.put("BATCH_SEAL", new PlanCheck("int, bigint, bigint, int, bigint", "3, 1, 3, 0, 1",
                Set.of("workrow_batch_pkey")));
        CHECKS.put("BATCH_FIND", new PlanCheck("bigint", "1", Set.of("workrow_batch_pkey")));
        CHECKS.put("BATCH_PRUNE", new PlanCheck("bigint, int", "604800000, 1000",
                Set.of("workrow_batch_finished_idx", "workrow_batch_pkey")));
        CHECKS.put("JOB_DEPENDENCY_RESULTS", new PlanCheck("bigint[], timestamptz", "'{1,2}', now() - interval '2 days'",
                Set.of(OUTCOME_BRIN)));
        CHECKS.put("JOB_PROMOTE_SCHEDULED", new PlanCheck("int", "1000", Set.of("workrow_scheduled_run_at_idx")));
        CHECKS.put("JOB_RETIRE_EXHAUSTED", new PlanCheck("int, int", "1000, 1000",
                Set.of("workrow_ready_exhausted_idx", "workrow_scheduled_exhausted_idx"), true));
        CHECKS.put("JOB_RETRY_DEAD", new PlanCheck("bigint[], bigint[], text, text, text, text, text, text, timestamptz, int",
                dead + ", " + dead + ", 'q0', 'q0', null, null, null, null, now(), 5000",
                Set.of("workrow_dead_pkey", "workrow_dead_queue_idx")));
        CHECKS.put("JOB_RETRY_DEAD (by queue and error)", new PlanCheck(
                "bigint[], bigint[], text, text, text, text, text, text, timestamptz, int",
                "null, null, 'q1', 'q1', 'boom', 'boom', null, null, now(), 5000",
                Set.of("workrow_dead_queue_idx", "workrow_dead_finished_idx")));
        CHECKS.put("JOB_RETRY_DEAD (by queue and kind)", new PlanCheck(
                "bigint[], bigint[], text, text, text, text, text, text, timestamptz, int",
                "null, null, 'q1', 'q1', null, null, 'boom 1', 'boom 1', now(), 5000",
                Set.of("workrow_dead_queue_idx", "workrow_dead_kind_idx", "workrow_dead_finished_idx")));
        CHECKS.put("JOB_CANCEL_DEAD", new PlanCheck("bigint[], bigint[], text, text, text, timestamptz, int",
                dead + ", " + dead + ", 'q0', null, null, now(), 5000",
                Set.of("workrow_dead_pkey", "workrow_dead_queue_idx", "workrow_dead_kind_idx")));
        CHECKS.put("JOB_CANCEL_DEAD (by kind)", new PlanCheck("bigint[], bigint[], text, text, text, timestamptz, int",
                "null, null, 'q1', 'boom 1', 'boom 1', now(), 5000",
                Set.of("workrow_dead_queue_idx", "workrow_dead_kind_idx")));
        CHECKS.put("JOB_SAVE_STEP", new PlanCheck("bigint, int, int, bigint, text", "1, 1, 1, 95, 's'",
                Set.of("workrow_claim_pkey")));
        CHECKS.put("CLAIMS_STILL_HELD", new PlanCheck("bigint[]", "'{1,2,3}'", Set.of("workrow_claim_pkey")));
        CHECKS.put("JOB_EXTEND_LEASE", new PlanCheck("bigint, bigint, int, int", "60000, 1, 1, 1",
                Set.of("workrow_claim_pkey")));
        // Counts every waiting and dead job (READS_WHOLE): no index is required of it.
        CHECKS.put("QUEUE_DEPTH", new PlanCheck("", "", Set.of(), true));
        CHECKS.put("JOB_LIST_RUNNING", new PlanCheck("text, text, int", "'q1', 'q1', 100", Set.of(JOB_DATA_PKEY)));
        CHECKS.put("JOB_LIST_DEAD", new PlanCheck("text, text, text, text, int", "'q1', 'q1', 'boom', 'boom', 100",
                Set.of("workrow_dead_queue_idx", "workrow_dead_finished_idx")));
        CHECKS.put("JOB_FIND", new PlanCheck("bigint", "1", Set.of(JOB_DATA_PKEY, "workrow_ready_id_idx",
                "workrow_scheduled_id_idx", "workrow_dead_pkey", OUTCOME_BRIN), true));
        CHECKS.put("JOB_CREATED_AT", new PlanCheck("bigint", "1", Set.of(JOB_DATA_PKEY)));
        // Bound by the job's enqueue time: the days before it are pruned, each day after read by its BRIN.
        CHECKS.put("JOB_RESULT", new PlanCheck("bigint, timestamptz", "1, now() - interval '1 day'",
                Set.of(OUTCOME_BRIN)));
        // A day back, the most it reads: the fill ends at midnight, so an hour back reads only empty days.
        // The last hour of the fill's history, as the dashboard asks for the last hour: the fill
        // ends at midnight (UTC), so "now() - 1 day" would cover a different share of it by the hour.
        CHECKS.put("JOB_FINISHED_PER_MINUTE", new PlanCheck("timestamptz",
                "date_trunc('day', now(), 'UTC') - interval '1 hour'",
                Set.of(OUTCOME_BRIN)));
        CHECKS.put("JOB_PRUNE_DEAD", new PlanCheck("bigint, int", "604800000, 1000",
                Set.of("workrow_dead_finished_idx", "workrow_dead_pkey"), true));
        // The dead groups read workrow_dead alone.
        // A sample of 1,000 newest deaths, not the 10,000 the admin reads: the fill has 20,000 dead
        // jobs, where a sample of half is read faster whole; a real history's dead are many more.
        CHECKS.put("JOB_DEAD_ERROR_GROUPS", new PlanCheck("int, int", "1000, 50",
                Set.of("workrow_dead_kind_idx", "workrow_dead_finished_idx"), true));
        CHECKS.put("JOB_DEAD_ERROR_GROUPS_OF_QUEUE", new PlanCheck("text, text, text, int, int",
                "'q1', 'q1', 'q1', 1000, 50", Set.of("workrow_dead_kind_idx")));
    }

    @BeforeAll
    static void fillAMillionJobs() {
        JdbcTemplate jdbc = database.jdbc();
        // The ids are the sequence's, so that the job data's ranges are created ahead of them as
        // maintenance does: every one of the million lands in a range, none in the default partition.
        jdbc.queryForObject("SELECT setval('workrow_job_id_seq', ?)", Long.class, ROWS);
        while (jdbc.queryForObject("SELECT workrow_extend_job_data(?)", String.class, ROWS) != null) {
            // one range per call, until the newest is less than half used
        }
        // The outcomes finish over the last ROWS seconds (11.6 days): each of those days gets its
        // partition first, as maintenance keeps them ahead, so that no row lands in the default.
        jdbc.queryForList("""
                SELECT workrow_add_outcome_day(day::date)
                FROM generate_series(((now() AT TIME ZONE 'UTC')::date - {days})::timestamp,
                                     (now() AT TIME ZONE 'UTC')::date::timestamp, interval '1 day') AS day
                """.replace("{days}", Integer.toString(DAYS)), Boolean.class);
        // By i % 100: 85% completed, 5% scheduled (due within the day), 5% ready, 2% running, 2%
        // dead, 1% cancelled; the scheduled and ready jobs have deadlines, half of them passed (the
        // job data's trigger notes them in workrow_deadline). Job i finished ROWS - i seconds ago, so ids grow with time as the
        // outcome log's BRIN expects. Queues go by blocks of 800 ids, so that every queue has jobs
        // in every home and the 16 running jobs of a block share one claim (token i / 800 + 1), the
        // claim the block's ended jobs have in their outcome rows too.
        for (String fill : List.of("""
                INSERT INTO workrow_job_data (id, queue, partition_bucket, priority, idempotency_key, payload,
                                              max_attempts, created_at, expires_at)
                SELECT i, 'q' || (i / 800 % 10), i % 1024, i % 3, CASE WHEN i % 2 = 0 THEN 'key-' || i END, '{}', 5,
                       now() - ({rows} - i) * interval '1 second' - interval '1 minute',
                       CASE WHEN i % 100 BETWEEN 85 AND 94 THEN now() + (i % 86400 - 43200) * interval '1 second' END
                FROM generate_series(1, {rows}) AS i
                """, """
                INSERT INTO workrow_job_key (queue, idempotency_key, job_id)
                SELECT queue, idempotency_key, id FROM workrow_job_data WHERE idempotency_key IS NOT NULL
                """, """
                INSERT INTO workrow_scheduled (id, queue, priority, run_at, max_attempts, partition_bucket)
                SELECT i, 'q' || (i / 800 % 10), i % 3, now() + (i % 86400) * interval '1 second', 5, i % 1024
                FROM generate_series(1, {rows}) AS i
                WHERE i % 100 BETWEEN 85 AND 89
                """, """
                INSERT INTO workrow_ready (id, queue, priority, run_at, max_attempts, partition_bucket)
                SELECT i, 'q' || (i / 800 % 10), i % 3, now() - (i % 86400) * interval '1 second', 5, i % 1024
                FROM generate_series(1, {rows}) AS i
                WHERE i % 100 BETWEEN 90 AND 94
                """, """
                INSERT INTO workrow_claim (token, queue, worker, lease_expires_at, started_at, ids, attempts, expiries,
                                           run_ats, settled, dropped)
                SELECT i / 800 + 1, 'q' || (i / 800 % 10), 'w', now() + interval '5 minutes',
                       now() - ({rows} - min(i)) * interval '1 second', array_agg(i ORDER BY i),
                       array_agg(1 ORDER BY i), array_agg(0 ORDER BY i),
                       array_agg(now() - ({rows} - i) * interval '1 second' ORDER BY i),
                       repeat('0', count(*)::int)::varbit, repeat('0', count(*)::int)::varbit
                FROM generate_series(1, {rows}) AS i
                WHERE i % 100 IN (95, 96)
                GROUP BY i / 800
                """, """
                INSERT INTO workrow_dead (id, queue, attempts, max_attempts, last_error, last_error_at, claimed_by,
                                          started_at, finished_at)
                SELECT i, 'q' || (i / 800 % 10), 5, 5, 'boom ' || (i / 100 % 7) || ': job ' || i, finished_at, 'w',
                       finished_at - interval '1 second', finished_at
                FROM generate_series(1, {rows}) AS i
                CROSS JOIN LATERAL (SELECT {finished} AS finished_at) AS at
                WHERE i % 100 IN (97, 98)
                """, """
                INSERT INTO workrow_outcome (job_id, attempt, claim_token, queue, status, worker, run_at, started_at,
                                             finished_at, error)
                SELECT i, CASE WHEN i % 100 < 85 THEN 1 ELSE 5 END, CASE WHEN i % 100 < 99 THEN i / 800 + 1 END,
                       'q' || (i / 800 % 10),
                       CASE WHEN i % 100 < 85 THEN 'completed' WHEN i % 100 < 99 THEN 'dead' ELSE 'cancelled' END,
                       'w', finished_at - interval '2 seconds', finished_at - interval '1 second', finished_at,
                       CASE WHEN i % 100 IN (97, 98) THEN 'boom ' || (i / 100 % 7) || ': job ' || i END
                FROM generate_series(1, {rows}) AS i
                CROSS JOIN LATERAL (SELECT {finished} AS finished_at) AS at
                WHERE i % 100 < 85 OR i % 100 >= 97
                """, """
                INSERT INTO workrow_job_data (id, queue, partition_bucket, priority, payload, max_attempts, created_at,
                                              after_ids)
                SELECT {rows} + k, 'q' || (k % 10), k % 1024, 0, '{}', 5, now(), ARRAY[100 * k + 95, 100 * k + 96]
                FROM generate_series(1, 9999) AS k
                """, """
                INSERT INTO workrow_waiting (id, queue, priority, run_at, max_attempts, partition_bucket, deps_left)
                SELECT {rows} + k, 'q' || (k % 10), 0, now(), 5, k % 1024, 2
                FROM generate_series(1, 9999) AS k
                """, """
                INSERT INTO workrow_dependency (dep_id, waiter_id, settled)
                SELECT 100 * k + d, {rows} + k, false
                FROM generate_series(1, 9999) AS k, (VALUES (95), (96)) AS dep(d)
                """, """
                UPDATE workrow_job_data SET batch_id = id / 100 + 1 WHERE id <= 100000
                """, """
                INSERT INTO workrow_batch (id, total, sealed, completed, first_job_id, last_job_id, created_at,
                                           finished_at)
                SELECT b, 100, true, 85, (b - 1) * 100, (b - 1) * 100 + 99, now() - interval '12 days',
                       CASE WHEN b % 2 = 0 THEN now() - (b % 20) * interval '1 day' END
                FROM generate_series(1, 1001) AS b
                """)) {
            jdbc.execute(fill.replace("{finished}", FINISHED).replace("{rows}", Integer.toString(ROWS)));
        }
        jdbc.execute("VACUUM ANALYZE");
        tablesWithJobs.addAll(jdbc.queryForList("""
                SELECT relname FROM pg_class
                WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND reltuples > 0
                """, String.class).stream().filter(name -> HOMES.matcher(name).matches()).toList());
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
                Field constant = JobSql.class.getDeclaredField(field);
                String sql = JobSql.render((String) constant.get(null), database.schema());
                for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
                    String plan = explain(connection, sql, entry.getValue(), mode);
                    Set<String> scanned = tablesScanned(plan);
                    scanned.removeIf(table -> READS_WHOLE.getOrDefault(field, Set.of()).stream()
                            .anyMatch(table::startsWith));
                    if (!scanned.isEmpty()) {
                        failures.add(entry.getKey() + " (" + mode + ") scans " + scanned + ":\n" + plan);
                    }
                    if (plan.contains("JIT:")) {
                        // Compiling the plan costs seconds: a cost estimate past jit_above_cost is a defect.
                        failures.add(entry.getKey() + " (" + mode + ") is costed high enough to be compiled (JIT):\n"
                                + plan);
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

    /** The tables holding jobs that {@code plan} reads by a sequential scan. */
    private static Set<String> tablesScanned(String plan) {
        Set<String> scanned = new HashSet<>();
        Matcher scan = SEQ_SCAN.matcher(plan);
        while (scan.find()) {
            if (tablesWithJobs.contains(scan.group(1))) {
                scanned.add(scan.group(1));
            }
        }
        return scanned;
    }

    /**
     * The statements by kind of error find a kind through workrow_dead_kind_idx: the kind is an
     * index condition, which holds only while JobSql's ERROR_KIND and V13's expression are the same.
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
                if (!plan.contains("workrow_dead_kind_idx") || !kindIsACondition) {
                    failures.add(name + " does not find the kind through workrow_dead_kind_idx:\n" + plan);
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    private static String explain(Connection connection, String sql, PlanCheck check, String mode) throws SQLException {
        return PlanExplain.explain(connection, sql, check.types(), check.arguments(), mode);
    }
}

package io.workrow.queue.faults;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Reads the ledgers after a drain and counts what must be zero and what is only reported.
 *
 * <p>Invariants (each must be 0): {@code lost}, enqueued jobs that are not completed;
 * {@code duplicate_effects}, effects beyond the first for one job; {@code stale_effects}, effects
 * not written under the token that completed the job (a late finalize that was accepted);
 * {@code lease_overlaps}, leases taken from a holder before they expired (by the sweeper while
 * {@code lease_expires_at} was still ahead, or by a claim while a token was still set);
 * {@code accepted_late_finalizes}, leases ended (completed, failed, released) by a session other
 * than the worker JVM that was granted them, which only a stale owner's accepted write could be
 * (a cancel is an operator's, from any session, and does not count);
 * {@code grants_ended_twice}, leases ended more than once (a second end accepted under one token:
 * a stale owner's end written in its own session, after a sweep had ended the same lease);
 * {@code invocations_without_lease}, handlers started while the job was not running under their
 * worker's lease (a second handler of one job beside its rightful one).
 *
 * <p>Figures: invocations of the given jobs, those invoked more than once and the most for one job
 * (at-least-once delivery's cost of each fault), leases recovered by the sweeper. The invariants
 * cover every job in the ledgers.
 */
final class FaultChecker {

    private final JdbcTemplate jdbc;

    FaultChecker(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** The figures for a run whose enqueued ids are {@code ids}. */
    Map<String, Object> check(List<Long> ids) {
        Long[] enqueued = ids.toArray(Long[]::new);
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("jobs", ids.size());
        figures.put("completed", count("""
                SELECT count(*) FROM unnest(?::bigint[]) AS enqueued(id)
                JOIN workrow_job AS job ON job.id = enqueued.id AND job.status = 'completed'
                """, (Object) enqueued));
        figures.put("lost", count("""
                SELECT count(*) FROM unnest(?::bigint[]) AS enqueued(id)
                LEFT JOIN workrow_job AS job ON job.id = enqueued.id
                WHERE job.status IS DISTINCT FROM 'completed'
                """, (Object) enqueued));
        figures.put("duplicate_effects", count("""
                SELECT coalesce(sum(effects - 1), 0) FROM (
                    SELECT count(*) AS effects FROM fault_effect GROUP BY job_id) AS per_job
                """));
        figures.put("stale_effects", count("""
                SELECT count(*) FROM fault_effect AS effect
                WHERE NOT EXISTS (SELECT 1 FROM fault_lease AS lease
                                  WHERE lease.job_id = effect.job_id AND lease.new_status = 'completed'
                                    AND lease.old_token = effect.token)
                """));
        figures.put("lease_overlaps", count("""
                SELECT count(*) FROM fault_lease
                WHERE (swept AND old_expires_at > changed_at)
                   OR (old_token IS NOT NULL AND new_token IS NOT NULL)
                """));
        figures.put("accepted_late_finalizes", count("""
                SELECT count(*) FROM fault_lease AS ended
                JOIN fault_lease AS granted ON granted.job_id = ended.job_id AND granted.new_token = ended.old_token
                WHERE NOT ended.swept AND ended.changed_by <> granted.changed_by AND ended.new_status <> 'cancelled'
                """));
        figures.put("grants_ended_twice", count("""
                SELECT count(*) FROM (SELECT job_id, old_token FROM fault_lease
                                      WHERE old_token IS NOT NULL AND new_token IS NULL
                                      GROUP BY job_id, old_token HAVING count(*) > 1) AS twice
                """));
        figures.put("invocations_without_lease", count("SELECT count(*) FROM fault_invocation WHERE NOT leased"));
        figures.put("effects", count("SELECT count(*) FROM fault_effect"));
        // At-least-once's cost, for these jobs (other queues' jobs may be retried on purpose).
        figures.put("invocations", count("SELECT count(*) FROM fault_invocation WHERE job_id = ANY (?)",
                (Object) enqueued));
        figures.put("jobs_invoked_more_than_once", count("""
                SELECT count(*) FROM (SELECT job_id FROM fault_invocation WHERE job_id = ANY (?)
                                      GROUP BY job_id HAVING count(*) > 1) AS again
                """, (Object) enqueued));
        figures.put("most_invocations_of_one_job", count("""
                SELECT coalesce(max(invocations), 0) FROM (
                    SELECT count(*) AS invocations FROM fault_invocation WHERE job_id = ANY (?) GROUP BY job_id) AS per_job
                """, (Object) enqueued));
        figures.put("leases_swept", count("SELECT count(*) FROM fault_lease WHERE swept"));
        return figures;
    }

    /** The invariants of {@link #check}: each of these figures must be 0. */
    static final List<String> INVARIANTS = List.of("lost", "duplicate_effects", "stale_effects", "lease_overlaps",
            "accepted_late_finalizes", "grants_ended_twice", "invocations_without_lease");

    private long count(String sql, Object... args) {
        Long value = jdbc.queryForObject(sql, Long.class, args);
        return value == null ? 0 : value;
    }
}

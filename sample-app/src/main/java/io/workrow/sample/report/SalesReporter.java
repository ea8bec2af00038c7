package io.workrow.sample.report;

import io.workrow.queue.JobContext;
import io.workrow.queue.QueueHandler;
import io.workrow.queue.RecurringJob;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Writes the sales report of the days before the tick it was enqueued for, every morning on one
 * node of the shop however many run ({@code workrow.recurring.daily-sales-report} in
 * application.yml). The tick comes from the job's idempotency key, not its run time, which moves
 * when an attempt fails: a retry or a catch-up after downtime still covers the days it was meant
 * for, and the tick as the report's key makes a job that runs twice write one report.
 */
@Component
class SalesReporter {

    /** The name of the recurring job in application.yml. */
    static final String RECURRING_NAME = "daily-sales-report";

    private static final Logger log = LoggerFactory.getLogger(SalesReporter.class);

    private final JdbcTemplate jdbc;

    SalesReporter(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @QueueHandler(value = "sales-report", transactional = true)
    void report(SalesReport report, JobContext job) {
        // A report enqueued by hand, not by a tick, covers the days before its run time.
        Instant tick = RecurringJob.tickOf(RECURRING_NAME, job).orElse(job.runAt());
        int written = jdbc.update("""
                INSERT INTO sales_report (tick, days, orders, amount_cents)
                SELECT ?, ?, count(*), coalesce(sum(amount_cents), 0)
                FROM orders WHERE created_at >= ? AND created_at < ?
                ON CONFLICT (tick) DO NOTHING
                """, Timestamp.from(tick), report.days(), Timestamp.from(tick.minus(Duration.ofDays(report.days()))),
                Timestamp.from(tick));
        log.info("Sales report for the {} day(s) before {} {}", report.days(), tick,
                written == 1 ? "written" : "was already written");
    }
}

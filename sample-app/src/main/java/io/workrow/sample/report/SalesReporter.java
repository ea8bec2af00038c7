package io.workrow.sample.report;

import io.workrow.queue.JobContext;
import io.workrow.queue.QueueHandler;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Reports the sales of the days before the tick it runs for, every morning on one node of the
 * shop however many run ({@code workrow.recurring.daily-sales-report} in application.yml). The
 * tick is the job's run time, so a report that runs late (a retry, a catch-up after downtime)
 * still covers the days it was meant for.
 */
@Component
class SalesReporter {

    private static final Logger log = LoggerFactory.getLogger(SalesReporter.class);

    private final JdbcTemplate jdbc;

    SalesReporter(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @QueueHandler("sales-report")
    void report(SalesReport report, JobContext job) {
        Timestamp until = Timestamp.from(job.runAt());
        Timestamp from = Timestamp.from(job.runAt().minus(Duration.ofDays(report.days())));
        Map<String, Object> sales = jdbc.queryForMap("""
                SELECT count(*) AS orders, coalesce(sum(amount_cents), 0) AS cents
                FROM orders WHERE created_at >= ? AND created_at < ?
                """, from, until);
        log.info("Sales report for the {} day(s) before {}: {} orders, {} cents", report.days(), job.runAt(),
                sales.get("orders"), sales.get("cents"));
    }
}

package io.workrow.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.RecurringJob;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.test.JobExpectation;
import io.workrow.queue.test.WorkrowTest;
import io.workrow.queue.test.WorkrowTester;
import io.workrow.queue.worker.DrainedJob;
import io.workrow.sample.order.Order;
import io.workrow.sample.order.OrderService;
import io.workrow.sample.receipt.ReceiptRequest;
import io.workrow.sample.report.SalesReport;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.transaction.AfterTransaction;
import org.springframework.transaction.annotation.Transactional;

/**
 * The shop's handlers tested with the Workrow test kit: what placing an order enqueues, and what
 * the receipt and report handlers do when their queues are drained in the test's thread.
 */
@WorkrowTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
class ShopJobsTests {

    @Autowired
    WorkrowTester workrow;

    @Autowired
    OrderService orders;

    @Autowired
    JobQueue jobQueue;

    @Autowired
    JdbcTemplate jdbc;

    @BeforeEach
    void cleanUp() {
        jdbc.update("DELETE FROM workrow_job");
        jdbc.update("DELETE FROM receipt");
    }

    private JobExpectation receiptFor(Order order) {
        return JobExpectation.on("send-receipt")
                .payload(new ReceiptRequest(order.id()))
                .partitionKey("order:" + order.id())
                .idempotencyKey("receipt-" + order.id());
    }

    @Test
    void placingAnOrderEnqueuesItsReceiptAndDrainingSendsIt() {
        Order order = orders.place("ada", 1200);
        workrow.assertEnqueued(receiptFor(order));
        assertThat(orders.find(order.id()).orElseThrow().receiptSent()).isFalse();

        List<DrainedJob> runs = workrow.drain("send-receipt");

        assertThat(runs).singleElement().satisfies(run -> {
            assertThat(run.outcome()).isEqualTo(JobOutcome.SUCCESS);
            assertThat(run.status()).isEqualTo(JobStatus.COMPLETED);
        });
        assertThat(orders.find(order.id()).orElseThrow().receiptSent()).isTrue();
        workrow.assertNotEnqueued(JobExpectation.on("send-receipt"));
    }

    @Test
    void aReceiptTheMailServerRejectsIsRetriedLaterAndAMissingOrderIsDiscarded() {
        Order poison = orders.place("poison", 500);
        long missing = jobQueue.enqueue("send-receipt", new ReceiptRequest(-1));

        List<DrainedJob> runs = workrow.drain("send-receipt");

        assertThat(runs).extracting(DrainedJob::attempt, DrainedJob::outcome, DrainedJob::status).containsExactly(
                tuple(1, JobOutcome.FAILURE, JobStatus.SCHEDULED),
                tuple(1, JobOutcome.DISCARDED, JobStatus.DEAD));
        assertThat(runs.get(0).error()).contains("mail server rejected the receipt for order " + poison.id());
        assertThat(runs.get(1).id()).isEqualTo(missing);
        assertThat(runs.get(1).error()).contains("order -1 does not exist");
        workrow.assertEnqueued(receiptFor(poison));
    }

    @Test
    void aReceiptJobThatRunsTwiceSendsOneReceipt() {
        Order order = orders.place("grace", 800);
        // The same receipt enqueued again without its idempotency key: as if the job ran twice.
        jobQueue.enqueue("send-receipt", new ReceiptRequest(order.id()));

        assertThat(workrow.drain("send-receipt")).hasSize(2).allMatch(DrainedJob::succeeded);

        assertThat(jdbc.queryForObject("SELECT count(*) FROM receipt WHERE order_id = ?", Long.class, order.id()))
                .isEqualTo(1);
    }

    private Order rolledBack;

    @Test
    @Transactional
    void anOrderAndItsReceiptJobAreOneTransaction() {
        rolledBack = orders.place("rolled-back", 100);

        workrow.assertEnqueued(receiptFor(rolledBack));
    }

    @AfterTransaction
    void theRolledBackOrderLeftNoJob() {
        workrow.assertNotEnqueued(receiptFor(rolledBack));
        assertThat(orders.find(rolledBack.id())).isEmpty();
    }

    @Test
    void theDailyReportCountsTheOrdersOfTheDayBeforeItsTick() {
        orders.place("barbara", 1500);
        orders.place("edsger", 2500);
        // A tick just after both orders by the database's clock, which decides when the job is due.
        Instant tick = jdbc.queryForObject("SELECT date_trunc('milliseconds', clock_timestamp())"
                + " + interval '1 millisecond'", Timestamp.class).toInstant();
        SalesReport report = new SalesReport(1);
        jobQueue.enqueue(JobRequest.of("sales-report", report).runAt(tick).idempotencyKey(
                RecurringJob.of("daily-sales-report", "0 0 6 * * *", "sales-report", report).idempotencyKey(tick)));
        workrow.assertEnqueued(JobExpectation.on("sales-report").payload(new SalesReport(1)).runAt(tick));

        await().atMost(Duration.ofSeconds(5)).until(() -> !workrow.drain("sales-report").isEmpty());

        assertThat(jdbc.queryForMap("SELECT orders, amount_cents FROM sales_report WHERE tick = ?",
                Timestamp.from(tick))).containsEntry("orders", 2L).containsEntry("amount_cents", 4000L);
    }
}

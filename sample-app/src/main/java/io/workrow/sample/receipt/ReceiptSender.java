package io.workrow.sample.receipt;

import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobContext;
import io.workrow.queue.QueueHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Sends receipts. Idempotent: the receipt row's unique key means a job that runs twice (after a
 * crash or a lost lease) still records, and would send, one receipt. Orders of the customer
 * {@code poison} fail every time, to show retries with backoff and retirement to {@code dead}.
 */
@Component
class ReceiptSender {

    private static final Logger log = LoggerFactory.getLogger(ReceiptSender.class);

    private final JdbcTemplate jdbc;

    ReceiptSender(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @QueueHandler("send-receipt")
    void send(ReceiptRequest request, JobContext job) {
        String customer = jdbc.query("SELECT customer FROM orders WHERE id = ?",
                rs -> rs.next() ? rs.getString(1) : null, request.orderId());
        if (customer == null) {
            throw new DiscardJobException("order " + request.orderId() + " does not exist");
        }
        if (customer.equals("poison")) {
            throw new IllegalStateException("mail server rejected the receipt for order " + request.orderId());
        }
        // A real shop would call its mail API here, passing job.idempotencyKey() so a retry is not a second mail.
        int recorded = jdbc.update("INSERT INTO receipt (order_id) VALUES (?) ON CONFLICT (order_id) DO NOTHING",
                request.orderId());
        log.info("Receipt for order {} {} (attempt {}/{}, key {})", request.orderId(),
                recorded == 1 ? "sent" : "was already sent", job.attempt(), job.maxAttempts(), job.idempotencyKey());
    }
}

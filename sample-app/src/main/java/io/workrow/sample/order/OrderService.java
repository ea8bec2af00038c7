package io.workrow.sample.order;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.sample.receipt.ReceiptRequest;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders. The order and its receipt job commit together, or neither exists. */
@Service
public class OrderService {

    private final OrderRepository orders;
    private final JobQueue jobQueue;
    private final JdbcTemplate jdbc;

    OrderService(OrderRepository orders, JobQueue jobQueue, JdbcTemplate jdbc) {
        this.orders = orders;
        this.jobQueue = jobQueue;
        this.jdbc = jdbc;
    }

    @Transactional
    public Order place(String customer, long amountCents) {
        Order order = orders.save(new Order(null, customer, amountCents));
        jobQueue.enqueue(JobRequest.of("send-receipt", new ReceiptRequest(order.id()))
                .partitionKey("order:" + order.id())
                .idempotencyKey("receipt-" + order.id()));
        return order;
    }

    @Transactional(readOnly = true)
    public Optional<OrderView> find(long id) {
        return orders.findById(id).map(order -> new OrderView(order.id(), order.customer(), order.amountCents(),
                Boolean.TRUE.equals(jdbc.queryForObject(
                        "SELECT EXISTS (SELECT 1 FROM receipt WHERE order_id = ?)", Boolean.class, id))));
    }

    /** An order as the API shows it. */
    public record OrderView(long id, String customer, long amountCents, boolean receiptSent) {
    }
}

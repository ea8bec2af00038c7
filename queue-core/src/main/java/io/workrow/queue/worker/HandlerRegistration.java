package io.workrow.queue.worker;

import io.workrow.queue.JobFunction;
import io.workrow.queue.JobHandler;
import java.lang.reflect.Type;

/**
 * A queue's handler with the type its payload is read as and how the queue is worked.
 *
 * @param payloadType a class or a parameterized type such as {@code List<Item>}
 * @param function the handler; what it returns is the job's result ({@code null}: none)
 * @param transaction for a transactional handler, the transaction its work and completion share;
 *     {@code null} for the default, where no transaction is open while the handler runs
 * @param description names the handler in logs and errors, e.g. {@code receipts.send(ReceiptRequest)}
 */
public record HandlerRegistration(String queue, Type payloadType, JobFunction<Object, ?> function,
        QueueOptions options, HandlerTransaction transaction, String description) {

    /** A non-transactional registration of a handler with no result. */
    public HandlerRegistration(String queue, Type payloadType, JobHandler<Object> handler, QueueOptions options) {
        this(queue, payloadType, JobFunction.of(handler), options, null, handler.getClass().getName());
    }

    public boolean isTransactional() {
        return transaction != null;
    }
}

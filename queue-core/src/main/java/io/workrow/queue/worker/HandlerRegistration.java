package io.workrow.queue.worker;

import io.workrow.queue.JobHandler;
import java.lang.reflect.Type;

/**
 * A queue's handler with the type its payload is read as and how the queue is worked.
 *
 * @param payloadType a class or a parameterized type such as {@code List<Item>}
 */
public record HandlerRegistration(String queue, Type payloadType, JobHandler<Object> handler,
        QueueOptions options) {
}

package io.workrow.queue.metrics;

import java.util.Map;

/**
 * What the producer writes into each job's {@code headers} column besides the payload: the trace
 * context, so the handler's work joins the trace that enqueued it. Called once per enqueue call.
 */
@FunctionalInterface
public interface EnqueueHeaders {

    /** Writes no headers. */
    EnqueueHeaders NONE = jobs -> Map.of();

    /** The headers for the {@code jobs} jobs of one enqueue call. */
    Map<String, String> capture(int jobs);
}

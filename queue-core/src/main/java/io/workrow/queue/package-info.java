/**
 * Workrow's public API: {@link io.workrow.queue.JobQueue} to enqueue, {@link io.workrow.queue.JobHandler}
 * and {@link io.workrow.queue.JobContext} to run jobs. Everything else is engine.
 */
package io.workrow.queue;

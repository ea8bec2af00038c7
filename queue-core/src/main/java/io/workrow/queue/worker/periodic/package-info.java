/**
 * Work the runtime does on a clock rather than per job: promoting scheduled jobs that came due,
 * and enqueueing recurring jobs' ticks. Internal to the runtime; public only so that
 * {@code io.workrow.queue.worker} can reach it.
 */
package io.workrow.queue.worker.periodic;

/**
 * Wake-ups: the one LISTEN connection that hears inserts and cancellations, and the wake-up a
 * waiting poller sleeps on. Internal to the runtime; public only so that
 * {@code io.workrow.queue.worker} can reach it.
 */
package io.workrow.queue.worker.notify;

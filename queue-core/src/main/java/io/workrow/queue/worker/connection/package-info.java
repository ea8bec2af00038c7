/**
 * Connections the runtime holds apart from its pool's turnover (the lease keeper's, the result
 * writer's, handlers' own writes), how a broken pooled connection is revealed, and the check that
 * the pool is large enough for all of them. Internal to the runtime; public only so that
 * {@code io.workrow.queue.worker} can reach it.
 */
package io.workrow.queue.worker.connection;

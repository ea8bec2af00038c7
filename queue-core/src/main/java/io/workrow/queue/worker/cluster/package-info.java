/**
 * The other workers, for ordered queues: each runtime's identity, its heartbeat in the worker
 * registry, and which partition buckets it owns among the live workers (rendezvous hashing).
 * Internal to the runtime; public only so that {@code io.workrow.queue.worker} can reach it.
 */
package io.workrow.queue.worker.cluster;

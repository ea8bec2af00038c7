/**
 * The runtime's threads: each queue's handler pool (platform or virtual threads) and the single
 * daemon thread each periodic helper runs on. Internal to the runtime; public only so that
 * {@code io.workrow.queue.worker} and its helpers can reach it.
 */
package io.workrow.queue.worker.thread;

/**
 * The worker runtime: per queue a poller that claims up to its free slots, handler threads, a
 * completer that writes results in batches, and one LISTEN connection for wake-ups.
 */
package io.workrow.queue.worker;

/**
 * The worker runtime and its engine: per queue a poller that claims as much as it has room for
 * (free slots plus a line sized from its handlers' throughput) and handler threads that run and
 * classify; one result writer, the single exit that records every outcome in fenced batches; one
 * lease keeper that renews every held lease. Its helpers live in the packages below it, which
 * never reach back up: {@code cluster} (who else works, bucket ownership), {@code notify} (the
 * LISTEN connection and wake-ups), {@code periodic} (scheduled promotion, recurring ticks),
 * {@code thread} (the runtime's threads) and {@code connection} (reserved and pooled connections).
 */
package io.workrow.queue.worker;

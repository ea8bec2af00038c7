/**
 * The worker runtime: per queue a poller that claims up to its free slots and handler threads
 * that run and classify; one result writer, the single exit that records every outcome in fenced
 * batches; one lease keeper that renews every held lease; one promoter of scheduled jobs; and one
 * LISTEN connection for wake-ups and cancellations.
 */
package io.workrow.queue.worker;

/**
 * Runnable benchmarks that print throughput and latency figures; docs/performance.md records them.
 */
package io.workrow.queue.benchmark;

/**
 * What the engine reports: counters and timers ({@link io.workrow.queue.metrics.QueueMetrics}),
 * depth and lag gauges, and an observation around each handler run. Micrometer is optional: its
 * implementations are only loaded when it is on the classpath.
 */
package io.workrow.queue.metrics;

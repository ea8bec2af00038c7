/**
 * What the engine reports: counters and timers ({@link io.workrow.queue.metrics.QueueMetrics}),
 * the depth and lag gauges' meters, an observation around each handler run, and the headers that
 * carry a producer's trace context into its jobs. Micrometer is optional: its
 * implementations are only loaded when it is on the classpath.
 */
package io.workrow.queue.metrics;

/**
 * Periodic chores, one class each, safe to run on every node at once: the stale lease sweeper,
 * the exhausted job retirer, the retention pruner, the partition keeper, the fairness state
 * pruner, and the refresh of the depth and lag gauges.
 */
package io.workrow.queue.maintenance;

/**
 * Periodic chores, one class each, safe to run on every node at once: the stale lease sweeper,
 * the exhausted job retirer and the retention pruner.
 */
package io.workrow.queue.maintenance;

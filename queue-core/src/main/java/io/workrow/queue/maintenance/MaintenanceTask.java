package io.workrow.queue.maintenance;

/**
 * A periodic database chore. Every node may run every task at the same time: each statement
 * skips rows another node has locked, so nothing is moved twice and nobody waits.
 */
public interface MaintenanceTask {

    /** A short name for logs and threads, e.g. {@code stale-lease-sweeper}. */
    String name();

    /** Runs one pass to completion and returns how many jobs it moved or deleted. */
    int runOnce();
}

package io.workrow.queue.store;

import java.time.Duration;
import java.util.List;

/**
 * A claim a worker still holds, for the renewal: its {@code token}, the lease to renew it by, and
 * the positions of it whose handlers still run.
 */
public record ClaimLease(long token, Duration lease, List<ClaimedPosition> open) {

    public ClaimLease {
        open = List.copyOf(open);
    }
}

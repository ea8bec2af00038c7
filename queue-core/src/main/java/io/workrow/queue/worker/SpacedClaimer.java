package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.FairnessStore;
import java.time.Duration;
import java.util.List;

/**
 * The claimer of a spaced fair queue. A key becomes claimable again when its frontier is reached,
 * which nothing announces: after a short claim the poller looks again when the earliest frontier
 * still ahead is reached (at most one poll interval later), so every key, whatever its own rate,
 * starts close to its spacing, and a queue with nothing spaced waits the whole interval.
 */
final class SpacedClaimer implements JobClaimer {

    /** The shortest wait, so that many keys with frontiers close together cost few claims. */
    private static final Duration MIN_WAIT = Duration.ofMillis(5);

    private final ClaimStore store;
    private final FairnessStore fairness;
    private final String queue;
    private final String workerId;
    private final Duration lease;
    private final int ratePerMinute;

    SpacedClaimer(ClaimStore store, FairnessStore fairness, String queue, String workerId, Duration lease,
            int ratePerMinute) {
        this.store = store;
        this.fairness = fairness;
        this.queue = queue;
        this.workerId = workerId;
        this.lease = lease;
        this.ratePerMinute = ratePerMinute;
    }

    @Override
    public List<ClaimedPosition> claim(int limit, boolean probes) {
        return store.claimSpaced(queue, workerId, limit, lease, probes, ratePerMinute);
    }

    @Override
    public Duration idleWait(Duration pollInterval) {
        Duration untilNext = fairness.untilNextSpacedStart(queue);
        if (untilNext == null || untilNext.compareTo(pollInterval) >= 0) {
            return pollInterval;
        }
        return untilNext.compareTo(MIN_WAIT) < 0 ? MIN_WAIT : untilNext;
    }
}

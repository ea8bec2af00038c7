package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.FairnessStore;
import io.workrow.queue.worker.cluster.BucketRing;
import io.workrow.queue.worker.cluster.WorkerRegistry;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * How one queue's jobs are claimed: the claim statement its options call for, with what that
 * statement needs. Every variant is one statement that refuses a paused queue and, unless it takes
 * a half-open breaker's probes, a queue whose breaker is not closed.
 */
@FunctionalInterface
interface JobClaimer {

    /** Claims up to {@code limit} jobs; {@code probes} when they are the probes a half-open breaker granted. */
    List<ClaimedPosition> claim(int limit, boolean probes);

    /**
     * Claims up to {@code limit} jobs, of which {@code forSlots} are for free handler slots and the
     * rest for the poller's line; only a key-capped queue's claim tells them apart (it takes no line).
     */
    default List<ClaimedPosition> claim(int limit, int forSlots, boolean probes) {
        return claim(limit, probes);
    }

    /**
     * Claims up to {@code limit} jobs, at most {@code keyCap} of one partition key claimed at once on
     * every node; to be run in the capped transaction. Only a plain queue's claimer has a per-key
     * cap: an ordered queue runs one job per key already, and a fair one shares its starts among
     * keys by its own rule, so theirs claim as always.
     */
    default List<ClaimedPosition> claimPerKey(int limit, int keyCap, boolean probes) {
        return claim(limit, probes);
    }

    /**
     * How long the poller waits after a claim came back short before it looks again, unless an
     * insert wakes it: {@code pollInterval}, for every queue whose jobs become claimable with a
     * notification (an insert, a completion, a resume).
     */
    default Duration idleWait(Duration pollInterval) {
        return pollInterval;
    }

    /**
     * {@code claimer} within {@code queue}'s per-key cap, when the queue has one ({@code caps}): its
     * claims then run in the key-capped transaction of {@code store}, for its free slots only (a job
     * in line would hold its key's slot). A cluster-wide cap is no business of the claim: the jobs
     * start within the node's share of it ({@link CapShare}).
     */
    static JobClaimer keyCapped(JobClaimer claimer, ClaimStore store, String queue, QueueCaps caps) {
        return new JobClaimer() {
            @Override
            public List<ClaimedPosition> claim(int limit, boolean probes) {
                return claim(limit, limit, probes);
            }

            @Override
            public List<ClaimedPosition> claim(int limit, int forSlots, boolean probes) {
                return caps.keyCapped(queue)
                        ? store.claimCapped(queue, Math.min(limit, forSlots),
                                (room, keyCap) -> keyCap == null ? claimer.claim(room, probes)
                                        : claimer.claimPerKey(room, keyCap, probes))
                        : claimer.claim(limit, probes);
            }

            @Override
            public Duration idleWait(Duration pollInterval) {
                return claimer.idleWait(pollInterval);
            }
        };
    }

    /** The claimer for {@code registration}'s queue in a runtime whose worker id and registry are given. */
    static JobClaimer forQueue(HandlerRegistration registration, ClaimStore store, FairnessStore fairness,
            String workerId, WorkerRegistry registry) {
        return forQueue(registration, store, fairness, workerId, queue -> registry.ownedBuckets(queue));
    }

    /**
     * The claimer a drain uses: the queue's own, except that an ordered queue's keys are all this
     * runtime's (a drain runs one job at a time, so a key's order holds without sharing buckets).
     */
    static JobClaimer forDrain(HandlerRegistration registration, ClaimStore store, FairnessStore fairness,
            String workerId) {
        int[] every = IntStream.range(0, BucketRing.BUCKETS).toArray();
        return forQueue(registration, store, fairness, workerId, queue -> every);
    }

    private static JobClaimer forQueue(HandlerRegistration registration, ClaimStore store, FairnessStore fairness,
            String workerId, Function<String, int[]> ownedBuckets) {
        String queue = registration.queue();
        QueueOptions options = registration.options();
        Duration lease = options.lease();
        int rate = options.fairness().ratePerMinute();
        switch (options.fairness().mode()) {
            case WEIGHTED:
                return (limit, probes) -> store.claimWeighted(queue, workerId, limit, lease, probes);
            case BURST:
                return (limit, probes) -> store.claimBurst(queue, workerId, limit, lease, probes, rate);
            case SPACED:
                return new SpacedClaimer(store, fairness, queue, workerId, lease, rate);
            case NONE:
            default:
                break;
        }
        if (options.ordering() != KeyOrdering.NONE) {
            boolean skipFailed = options.ordering() == KeyOrdering.SKIP;
            return (limit, probes) -> store.claimOrdered(queue, workerId, limit, lease, probes,
                    ownedBuckets.apply(queue), skipFailed);
        }
        return new JobClaimer() {
            @Override
            public List<ClaimedPosition> claim(int limit, boolean probes) {
                return store.claim(queue, workerId, limit, lease, probes);
            }

            @Override
            public List<ClaimedPosition> claimPerKey(int limit, int keyCap, boolean probes) {
                return store.claimKeyCapped(queue, workerId, limit, lease, probes, keyCap);
            }
        };
    }
}

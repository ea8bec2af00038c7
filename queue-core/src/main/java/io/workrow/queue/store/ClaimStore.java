package io.workrow.queue.store;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The statements of a claim's life, as the runtime runs them: claim due jobs as a batch under one
 * lease, renew the lease, record each claimed position's end. A claimed job is fenced by its
 * claim's token and its position in the claim; every write about it presents both, and a claim
 * that was swept, or a position that was cancelled, refuses it.
 */
public interface ClaimStore {

    /** Claims up to {@code limit} due jobs of {@code queue} under one lease ({@code probes}: breaker probes). */
    List<ClaimedPosition> claim(String queue, String worker, int limit, Duration lease, boolean probes);

    /**
     * Claims up to {@code limit} jobs of an ordered queue: per partition key in {@code buckets}, the
     * oldest ready job while no job of the key runs ({@code skipFailed}: a job of the key waiting to
     * retry does not hold it).
     */
    List<ClaimedPosition> claimOrdered(String queue, String worker, int limit, Duration lease, boolean probes,
            int[] buckets, boolean skipFailed);

    /**
     * Claims up to {@code limit} jobs of a queue with at most {@code keyCap} claimed per partition key
     * on every node; to be run inside {@link #claimCapped}, which serialises the queue's claims.
     */
    List<ClaimedPosition> claimKeyCapped(String queue, String worker, int limit, Duration lease, boolean probes,
            int keyCap);

    /** Claims up to {@code limit} jobs of a weighted fair queue (its keys share starts by weight). */
    List<ClaimedPosition> claimWeighted(String queue, String worker, int limit, Duration lease, boolean probes);

    /** Claims up to {@code limit} jobs of a burst fair queue: each key at most its rate per minute. */
    List<ClaimedPosition> claimBurst(String queue, String worker, int limit, Duration lease, boolean probes,
            int ratePerMinute);

    /** Claims up to {@code limit} jobs of a spaced fair queue: one job per key per {@code 1 / rate}. */
    List<ClaimedPosition> claimSpaced(String queue, String worker, int limit, Duration lease, boolean probes,
            int ratePerMinute);

    /**
     * Makes up to {@code limit} scheduled jobs that have fallen due claimable; returns how many per
     * queue.
     */
    Map<String, Integer> promoteScheduled(int limit);

    /**
     * Ends positions and says of each whether it counted; {@link EndResult.Verdict#BUSY} ends are
     * to be sent again. An end must not be sent twice in one call.
     */
    Map<PositionEnd, EndResult> endMany(Collection<PositionEnd> ends);

    /**
     * Completes one job inside the transaction of the caller's thread (a transactional handler's),
     * on this store's data source, waiting for locks rather than skipping; false when the position
     * is no longer open (the lease was lost, or the job cancelled).
     */
    default boolean completeInTransaction(ClaimedPosition job) {
        return completeInTransaction(job, null);
    }

    /** {@link #completeInTransaction(ClaimedPosition)} storing the handler's result, as JSON ({@code null}: none). */
    boolean completeInTransaction(ClaimedPosition job, String resultJson);

    /**
     * The stored results of the jobs job {@code id} waited for, as JSON text by job id in the order
     * they were named; only those that completed with a result still retained.
     */
    Map<Long, String> dependencyResultsJson(long id);

    /**
     * Renews each claim by its own lease and vouches for all of them until {@code vouch} from now.
     * Returns each renewed claim's dropped positions (cancelled jobs, whose handlers are to be
     * interrupted); a claim missing from the result was lost or is locked by another session for
     * now ({@link #stillHeld} tells which).
     */
    Map<Long, Set<Integer>> renewLeases(String worker, Collection<ClaimLease> claims, Duration vouch);

    /** The tokens of {@code claims} that still hold their jobs, read without waiting on locks. */
    Set<Long> stillHeld(Collection<ClaimLease> claims);

    /** {@code worker} vouches for no lease any more (it is stopping). */
    void forgetLeaseHolder(String worker);

    /** Records the step a running job reached; false when its position is no longer open. */
    boolean saveStep(ClaimedPosition job, String step);

    /** Extends a running job's lease to at least {@code lease} from now; false when its position is closed. */
    boolean extendLease(ClaimedPosition job, Duration lease);

    /**
     * Runs {@code claim} within {@code queue}'s per-key cap, in a transaction holding the queue's
     * cap row, so that no two nodes claim the same keys' room; {@code claim} gets {@code limit} and
     * the per-key cap in force ({@code null}: none any more), and is not called for a limit of 0.
     */
    List<ClaimedPosition> claimCapped(String queue, int limit, RoomClaim claim);

    /** The claim {@link #claimCapped} runs in its transaction. */
    @FunctionalInterface
    interface RoomClaim {

        /** Claims up to {@code limit} jobs, at most {@code keyCap} of one partition key at once ({@code null}: no per-key cap). */
        List<ClaimedPosition> claim(int limit, Integer keyCap);
    }

    /**
     * Changes {@code worker}'s share of {@code queue}'s cluster-wide cap, in a transaction holding
     * the queue's cap row: {@code rule} decides it from the cap in force and the other nodes' live
     * shares, read after the lock; the share counts for {@code lease} unless renewed
     * ({@link #renewShares}), a want without slots for {@code wantLife}. A share of no slots wanting
     * none is deleted; without a cap in force the node's share is deleted and the grant says so.
     */
    ShareGrant resizeShare(String queue, String worker, Duration lease, Duration wantLife, ShareRule rule);

    /** Whether {@code queue} has jobs due and not claimed (in ready): how a node without a slot learns it has work. */
    boolean hasReady(String queue);

    /** How a node decides its share under the cap lock. */
    @FunctionalInterface
    interface ShareRule {

        /** The node's share, given the queue's {@code cap} and the other nodes' live shares. */
        SlotShare decide(int cap, List<SlotShare> others);
    }

    /**
     * Pushes {@code worker}'s live shares on by {@code lease}; returns their queues (a share that
     * lapsed is missing: the node must take it again).
     */
    java.util.Set<String> renewShares(String worker, Duration lease);

    /** Gives back {@code worker}'s shares of {@code queues}' caps. */
    void dropShares(String worker, Collection<String> queues);

    /** The same statements on another data source (the runtime's reserved connections). */
    ClaimStore on(DataSource dataSource);

    /**
     * The same statements with claims that fence each job alone, for a transactional queue, whose
     * handler's open transaction holds its claim locked until it ends.
     */
    ClaimStore perJob();
}

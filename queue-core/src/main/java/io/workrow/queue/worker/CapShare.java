package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ShareGrant;
import io.workrow.queue.store.SlotShare;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's share of one queue's cluster-wide concurrency cap ({@code global-concurrency}): the
 * most of the queue's jobs it starts at once. The live shares of all nodes never add up to more
 * than the cap, because a node raises its share only under the queue's cap lock, after reading the
 * others' ({@link ClaimStore#resizeShare}). Jobs claimed ahead wait in line without a slot, so a
 * capped queue claims like any other, and a share changes only when the node wants more, gives
 * back, or reviews what the others want, not at every claim.
 *
 * <p>Handler threads take a slot before they start a job ({@link #tryAcquire}) and give it back
 * when they stop taking jobs ({@link #release}); a thread stops at its next job when the node
 * holds more than its share ({@link #overdrawn}), so a share lowered for another node is given
 * back as jobs end, never by stopping one. Every change of the share runs on the queue's poller
 * thread ({@link #maintain}); the lease keeper pushes the share on with its renewals
 * ({@link #renewed}), and a share the keeper finds lapsed in the database holds nothing here until
 * it is taken again.
 *
 * <p>While several nodes want more than the cap, each gets its fair part: the cap is filled by the
 * smallest wants first and split evenly among the rest (in worker order for what does not divide).
 * A node holding more than its part while another waits starts no more jobs until it is within its
 * part, then gives the rest back.
 */
final class CapShare {

    /** How often a node waiting for slots asks again, and gives back slots it stopped using. */
    static final Duration RETRY = Duration.ofMillis(50);

    /** How often a node holding a share looks whether other nodes wait for slots. */
    static final Duration REVIEW = Duration.ofMillis(250);

    /** How long slots go unused before the node gives them back. */
    static final Duration IDLE = Duration.ofMillis(500);

    /**
     * How long a want without slots counts for the others unless asked again (a waiting node asks
     * at least every {@link #REVIEW}): a node that dies waiting stops holding the others to their
     * fair parts within it.
     */
    static final Duration WANT_LIFE = Duration.ofSeconds(1);

    /**
     * How long a node of an ordered queue must have waited with no slot before its fair part comes
     * before those of nodes that hold slots: each owns its keys, so the slots must go round.
     */
    static final Duration TURN = Duration.ofSeconds(1);

    private static final Logger log = LoggerFactory.getLogger(CapShare.class);

    private final ClaimStore store;
    private final QueueCaps caps;
    private final String queue;
    private final String worker;
    private final int concurrency;
    private final Duration lease;
    /** Whether the slots go round the nodes that wait (an ordered queue: each node owns its keys). */
    private final boolean takesTurns;

    /** Handler threads holding a slot: started jobs, whether a cap is in force or not. */
    private final AtomicInteger inUse = new AtomicInteger();
    /** Whether a cap was in force at the last change of the share. */
    private volatile boolean capped;
    /** The share in the database. */
    private volatile int granted;
    /** How many may run at once here: the share, or less while part of it goes back to another node. */
    private volatile int limit;
    /** What this node may keep of the cap, as of the last change: all it wanted, or its fair part. */
    private int part;
    /** What this node wanted at the last change. */
    private volatile int askedFor;
    /** Until when (System.nanoTime) the share counts in the database at least. */
    private volatile long validUntil;
    /** While a change of the share is in flight, no thread takes a slot. */
    private boolean changing;
    private long changedAt = System.nanoTime() - REVIEW.toNanos();
    private long idleSince;
    /** When (System.nanoTime) the last change of the share had committed. */
    private long committedAt = System.nanoTime();
    /** Since when (System.nanoTime) this node has wanted slots and held none, as its row says; 0: not. */
    private long waitingSince;
    /** When (System.nanoTime) this node last asked whether the queue has ready jobs, having no slot. */
    private long askedReadyAt = System.nanoTime() - REVIEW.toNanos();
    /** What it learned then. */
    private boolean readyWhenAsked;

    CapShare(ClaimStore store, QueueCaps caps, String queue, String worker, int concurrency, Duration lease,
            boolean takesTurns) {
        this.store = store;
        this.caps = caps;
        this.queue = queue;
        this.worker = worker;
        this.concurrency = concurrency;
        this.lease = lease;
        this.takesTurns = takesTurns;
    }

    String queue() {
        return queue;
    }

    /**
     * Whether the slots go round the nodes that wait (an ordered queue: each node owns its keys, so
     * only its own claim tells whether it has work, and only it can run its keys' jobs).
     */
    boolean takesTurns() {
        return takesTurns;
    }

    /** Whether the queue's jobs start within a share (a cluster-wide cap was in force at the last look). */
    boolean capped() {
        return capped;
    }

    /** How many of the queue's jobs may run here at once now: the share, or its part kept. */
    int limit() {
        return capped ? limit : concurrency;
    }

    /** Takes a slot for a handler thread that is to start jobs; false when the share has none free. */
    synchronized boolean tryAcquire() {
        if (capped && (changing || inUse.get() >= limit || lapsed(System.nanoTime()))) {
            return false;
        }
        inUse.incrementAndGet();
        return true;
    }

    /** A handler thread stopped taking jobs. */
    void release() {
        inUse.decrementAndGet();
    }

    /** Whether a thread holding a slot must stop taking jobs: more run than the share allows, or it lapsed. */
    boolean overdrawn() {
        return capped && (inUse.get() > limit || lapsed(System.nanoTime()));
    }

    /** The lease keeper pushed the share on, from a renewal sent at {@code sentNanos}, by {@code renewal}. */
    void renewed(long sentNanos, Duration renewal) {
        long until = sentNanos + renewal.toNanos();
        if (until - validUntil > 0) {
            validUntil = until;
        }
    }

    /**
     * The lease keeper's renewal sent at {@code sentNanos} found no live share of this node in the
     * database: it holds nothing until taken again (unless the share was taken after that renewal).
     */
    synchronized void lapsedInDatabase(long sentNanos) {
        if (capped && granted > 0 && committedAt - sentNanos < 0) {
            log.warn("queue={} this node's share of the cluster-wide cap ({} slots) lapsed in the database: it starts"
                    + " no more jobs until it takes a share again", queue, granted);
            granted = 0;
            limit = 0;
            validUntil = System.nanoTime();
        }
    }

    /** Whether this node has a row to give back at stop: a share, or a want the others keep room for. */
    boolean asked() {
        return capped && (granted > 0 || askedFor > 0);
    }

    /** Whether handler threads hold slots of this queue (at stop: ones that ignored the interrupt). */
    boolean inUse() {
        return inUse.get() > 0;
    }

    /** Whether this node holds slots in the database, for the lease keeper. */
    boolean holds() {
        return capped && granted > 0;
    }

    /**
     * Takes, grows, reviews or gives back the share as the node's work asks; run by the queue's
     * poller before each claim, {@code inLine} being its jobs claimed and not started and
     * {@code more} whether it knows of more due jobs than it holds (its last claim came back full,
     * or, without a slot, the queue has ready jobs). A node with work wants all its handler slots;
     * one without, what it runs.
     */
    void maintain(int inLine, boolean more) {
        long now = System.nanoTime();
        if (!caps.globallyCapped(queue)) {
            if (capped) {
                change(0, now); // the cap was cleared: give the share back, and start without one
            }
            return;
        }
        int used = inUse.get();
        int wanted = inLine > 0 || more || readyWithoutASlot(now) ? concurrency : Math.min(concurrency, used);
        long since = now - changedAt;
        boolean due;
        if (!capped) {
            // Not yet under the cap, or the database had none when this node's configuration has
            // one (another node declared it away): looked at again at the review's pace.
            due = since >= REVIEW.toNanos();
        } else if (lapsed(now)) {
            due = wanted > 0;
        } else if (granted == 0 && askedFor > wanted) {
            due = since >= RETRY.toNanos(); // it stopped waiting: the others need not keep its part free
        } else if (granted > limit && used <= limit) {
            due = since >= RETRY.toNanos(); // part of the share goes back to a node that waits
        } else if (wanted > granted) {
            // Wanting more than it asked for, or short of the part it was given: ask at once, or
            // again soon. Holding its fair part while others wait: review.
            due = wanted > askedFor || since >= (granted >= part ? REVIEW : RETRY).toNanos();
        } else if (granted > Math.max(used, wanted)) {
            if (idleSince == 0) {
                idleSince = now;
            }
            due = now - idleSince >= IDLE.toNanos();
        } else {
            due = granted > 0 && since >= REVIEW.toNanos();
        }
        if (granted <= Math.max(used, wanted)) {
            idleSince = 0;
        }
        if (due) {
            change(wanted, now);
        }
    }

    /** Gives back the whole share (the runtime stops; its row is deleted with the others by the caller). */
    void forget() {
        granted = 0;
        capped = false;
    }

    /**
     * Whether the queue has ready jobs while this node's share gives it no slot (its poller claims
     * nothing then): asked at most once a review, so that its want tells the others.
     */
    private boolean readyWithoutASlot(long now) {
        if (!capped || limit > 0 || takesTurns) {
            // With turns (an ordered queue) the node's own keys tell: its poller claims one job of them.
            return false;
        }
        if (now - askedReadyAt >= REVIEW.toNanos()) {
            askedReadyAt = now;
            readyWhenAsked = store.hasReady(queue);
        }
        return readyWhenAsked;
    }

    private boolean lapsed(long now) {
        return now - validUntil >= 0;
    }

    private void change(int wanted, long now) {
        int floor;
        synchronized (this) {
            changing = true;
            floor = inUse.get();
        }
        // [0]: what the node may keep of the cap; [1]: what it may run of it now, others' shares counted
        int[] decided = {0, 0};
        long sent = System.nanoTime();
        try {
            ShareGrant grant = store.resizeShare(queue, worker, lease, WANT_LIFE, (cap, others) -> {
                decided[0] = keptPart(cap, others, wanted);
                decided[1] = Math.min(decided[0], Math.max(0, cap - others.stream().mapToInt(SlotShare::slots).sum()));
                // Never less than runs here now, which the node cannot take back: it runs down to
                // what it may run as its jobs end, and gives back the rest at its next change.
                return new SlotShare(worker, Math.max(floor, decided[1]), wanted);
            });
            synchronized (this) {
                changedAt = now;
                committedAt = System.nanoTime();
                idleSince = 0;
                if (grant.cap() == null) {
                    if (capped) {
                        log.info("queue={} has no cluster-wide cap any more: its jobs start without a share", queue);
                    }
                    capped = false;
                    granted = 0;
                    return;
                }
                if (!capped) {
                    log.info("queue={} starts its jobs within a share of its cluster-wide cap of {}", queue, grant.cap());
                }
                if (grant.slots() != granted) {
                    log.debug("queue={} share of the cluster-wide cap of {}: {} slots (was {})", queue, grant.cap(),
                            grant.slots(), granted);
                }
                granted = grant.slots();
                if (granted > 0 || wanted == 0) {
                    waitingSince = 0;
                } else if (waitingSince == 0) {
                    waitingSince = sent;
                }
                part = decided[0];
                askedFor = wanted;
                limit = decided[1];
                validUntil = sent + lease.toNanos();
                capped = true;
            }
        } finally {
            synchronized (this) {
                changing = false;
            }
        }
    }

    /** What this node may keep of the cap: all it wants, or its fair part while another node waits. */
    private int keptPart(int cap, List<SlotShare> others, int wanted) {
        boolean othersWait = others.stream().anyMatch(other -> other.wanted() > other.slots());
        return othersWait ? Math.min(wanted, fairPart(cap, others, wanted)) : wanted;
    }

    /**
     * This node's part when the cap is shared by wants: the smallest wants are met first, and what
     * is left is split evenly among the rest, the indivisible rest going to the first in worker order
     * (in an ordered queue, to the nodes that have waited longest with no slot).
     */
    private int fairPart(int cap, List<SlotShare> others, int wanted) {
        List<SlotShare> all = new ArrayList<>(others);
        long since = waitingSince;
        all.add(new SlotShare(worker, granted, wanted,
                since == 0 ? 0 : Duration.ofNanos(System.nanoTime() - since).toMillis()));
        return fairParts(cap, all, takesTurns).getOrDefault(worker, 0);
    }

    /**
     * Each node's fair part of {@code cap} given what each wants ({@link #fairPart}); where the
     * slots {@code takeTurns}, nodes that have waited a {@link #TURN} with none come first among
     * equal wants, the longest waiting first.
     */
    static java.util.Map<String, Integer> fairParts(int cap, List<SlotShare> shares, boolean takeTurns) {
        List<SlotShare> all = new ArrayList<>(shares);
        Comparator<SlotShare> order = Comparator.comparingInt(SlotShare::wanted);
        if (takeTurns) {
            order = order.thenComparing(share -> share.waitedMillis() >= TURN.toMillis() ? -share.waitedMillis() : 0);
        }
        all.sort(order.thenComparing(SlotShare::worker));
        java.util.Map<String, Integer> parts = new java.util.LinkedHashMap<>();
        int remaining = cap;
        for (int i = 0; i < all.size(); i++) {
            int nodesLeft = all.size() - i;
            int part = Math.min(all.get(i).wanted(), (remaining + nodesLeft - 1) / nodesLeft);
            parts.put(all.get(i).worker(), part);
            remaining -= part;
        }
        return parts;
    }
}

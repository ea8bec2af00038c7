package io.workrow.queue.store;

/**
 * One node's share of a queue's cluster-wide cap ({@code workrow_cap_share}).
 *
 * @param worker the node
 * @param slots how many of the queue's jobs it may run at once
 * @param wanted how many it could run now: more than {@code slots} when it waits for room
 * @param waitedMillis how long it has wanted slots and held none (0 when it holds some)
 */
public record SlotShare(String worker, int slots, int wanted, long waitedMillis) {

    /** A share with no wait counted. */
    public SlotShare(String worker, int slots, int wanted) {
        this(worker, slots, wanted, 0);
    }
}

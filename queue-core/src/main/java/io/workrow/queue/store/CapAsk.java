package io.workrow.queue.store;

import java.util.List;

/**
 * What a node asks of a capped claim ({@link ClaimStore#claimCapped}), and how much the cap lets
 * it take ({@link #room}).
 *
 * @param limit the most jobs wanted: the poller's free handler slots plus room in its line
 * @param forSlots how many of them are for free handler slots
 * @param inLine the node's jobs of the queue claimed already and waiting in its line
 * @param finished the node's jobs of the queue whose handlers have returned and whose ends are not
 *     written yet: their slots count as free in the claim's count
 */
public record CapAsk(int limit, int forSlots, int inLine, List<ClaimedPosition> finished) {

    /**
     * The share of the cap's room a node's whole line may hold: jobs in line count against the cap
     * while they wait, so a line that never holds more than the room it leaves free never takes the
     * last of it, and other nodes' free slots find at least as much room as the line holds.
     */
    static final double LINE_SHARE = 0.5;

    public CapAsk {
        finished = List.copyOf(finished);
    }

    /**
     * How many jobs the claim may take when {@code open} of the queue's positions count against its
     * {@code cap}: the free slots first, then for the line what keeps the node's whole line (the
     * jobs in it and the new ones) within {@link #LINE_SHARE} of the room its slots leave; never
     * more than {@link #limit}.
     */
    public int room(int cap, int open) {
        int free = Math.max(0, cap - open);
        int slots = Math.min(Math.min(forSlots, limit), free);
        int wholeLine = (int) Math.floor((free - slots + inLine) * LINE_SHARE);
        int line = Math.max(0, Math.min(limit - slots, wholeLine - inLine));
        return slots + line;
    }

    /** The same ask without a line: under a per-key cap a job in line would hold its key's slot. */
    public CapAsk withoutLine() {
        return new CapAsk(Math.min(limit, forSlots), forSlots, inLine, finished);
    }
}

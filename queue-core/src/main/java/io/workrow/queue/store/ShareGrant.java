package io.workrow.queue.store;

/**
 * What a node holds of a queue's cluster-wide cap after a change of its share
 * ({@link ClaimStore#resizeShare}).
 *
 * @param cap the cap in force, {@code null} when the queue has none (then the node holds no share)
 * @param slots the node's share
 */
public record ShareGrant(Integer cap, int slots) {

    /** The queue has no cluster-wide cap in force. */
    public static ShareGrant uncapped() {
        return new ShareGrant(null, 0);
    }
}

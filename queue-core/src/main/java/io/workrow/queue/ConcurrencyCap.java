package io.workrow.queue;

/**
 * A queue's concurrency caps across every node, as every node sees them (a row of
 * {@code workrow_queue_cap}): the cluster-wide one ({@code workrow.queues.<queue>.global-concurrency})
 * and the per-key one ({@code key-concurrency}).
 *
 * @param configured the cluster-wide cap the runtimes working the queue declared at start (the
 *     last to start wins), or {@code null}
 * @param setByHand the cluster-wide cap set at run time ({@link QueueAdmin#setGlobalConcurrency}),
 *     which wins over the configured one until cleared, or {@code null}
 * @param reason why the cluster-wide cap was set by hand, or {@code null}
 * @param keyConfigured the per-key cap the runtimes declared at start, or {@code null}
 * @param keySetByHand the per-key cap set at run time ({@link QueueAdmin#setKeyConcurrency}),
 *     which wins over the configured one until cleared, or {@code null}
 * @param keyReason why the per-key cap was set by hand, or {@code null}
 * @param running the queue's open positions now, on every node: its jobs running, those waiting in
 *     a node's line (which hold no share of the cluster-wide cap, so this may pass it), and those
 *     whose handlers have returned while their ends are being written
 */
public record ConcurrencyCap(String queue, Integer configured, Integer setByHand, String reason,
        Integer keyConfigured, Integer keySetByHand, String keyReason, int running) {

    /** The cluster-wide cap in force: the one set by hand, else the configured one; {@code null} for none. */
    public Integer cap() {
        return setByHand != null ? setByHand : configured;
    }

    /** The per-key cap in force: the one set by hand, else the configured one; {@code null} for none. */
    public Integer keyCap() {
        return keySetByHand != null ? keySetByHand : keyConfigured;
    }
}

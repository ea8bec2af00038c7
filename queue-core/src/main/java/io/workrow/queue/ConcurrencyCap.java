package io.workrow.queue;

/**
 * A queue's cluster-wide concurrency cap ({@code workrow.queues.<queue>.global-concurrency}), as
 * every node sees it (a row of {@code workrow_queue_cap}).
 *
 * @param configured the cap the runtimes working the queue declared at start (the last to start
 *     wins), or {@code null}
 * @param setByHand the cap set at run time ({@link QueueAdmin#setGlobalConcurrency}), which wins
 *     over the configured one until cleared, or {@code null}
 * @param reason why it was set by hand, or {@code null}
 * @param running the queue's jobs claimed now, on every node
 */
public record ConcurrencyCap(String queue, Integer configured, Integer setByHand, String reason, int running) {

    /** The cap in force: the one set by hand, else the configured one. */
    public int cap() {
        return setByHand != null ? setByHand : configured;
    }
}

package io.workrow.queue.store;

/**
 * A job handed back at shutdown. {@code giveBack}: its handler never started, so the attempt the
 * claim counted is returned.
 */
public record JobRelease(long id, long leaseToken, boolean giveBack) {
}

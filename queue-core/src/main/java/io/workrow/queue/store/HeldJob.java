package io.workrow.queue.store;

/** A job id with the fencing token its holder presents, for the batch statements. */
public record HeldJob(long id, long leaseToken) {
}

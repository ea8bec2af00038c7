package io.workrow.queue.store;

import java.time.Duration;

/**
 * A failed attempt to record: the job and the token its holder presents, the error for
 * {@code last_error}, and either a retry delay or {@code discard} (dead at once).
 */
public record JobFailure(long id, long leaseToken, String error, Duration retryDelay, boolean discard) {
}

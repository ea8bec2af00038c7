package io.workrow.queue.store;

import java.time.Duration;

/** A held job whose lease is to run {@code lease} from the database's current time. */
public record LeaseRenewal(long id, long leaseToken, Duration lease) {
}

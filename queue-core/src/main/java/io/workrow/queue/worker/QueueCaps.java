package io.workrow.queue.worker;

import io.workrow.queue.store.CapStore;
import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which queues have a cluster-wide concurrency cap, as this runtime knows it: the caps it
 * configured, and every cap in the database as of its last look, taken at most once a
 * {@link #REFRESH} by whichever poller asks. A capped queue's claims take the capped path
 * ({@code ClaimStore.claimCapped}), which reads the cap in force under its lock; a cap set by hand
 * on a queue not capped before applies here from the next refresh.
 */
final class QueueCaps {

    /** How stale this runtime's view of the caps set by hand may be. */
    static final Duration REFRESH = Duration.ofSeconds(2);

    private static final Logger log = LoggerFactory.getLogger(QueueCaps.class);

    private final CapStore store;
    private final Set<String> configured;
    private volatile Set<String> inDatabase = Set.of();
    private volatile long refreshedAt = System.nanoTime() - 2 * REFRESH.toNanos();

    QueueCaps(CapStore store, Set<String> configured) {
        this.store = store;
        this.configured = Set.copyOf(configured);
    }

    /** Whether {@code queue}'s claims must take the capped path. */
    boolean capped(String queue) {
        if (configured.contains(queue)) {
            return true;
        }
        refreshIfStale();
        return inDatabase.contains(queue);
    }

    /**
     * Whether {@code queue} is capped as this runtime last saw the caps, without looking again: for
     * the handler threads and the result writer, which must not wait on the database for it.
     */
    boolean knownCapped(String queue) {
        return configured.contains(queue) || inDatabase.contains(queue);
    }

    private void refreshIfStale() {
        long now = System.nanoTime();
        if (now - refreshedAt < REFRESH.toNanos()) {
            return;
        }
        synchronized (this) {
            if (now - refreshedAt < REFRESH.toNanos()) {
                return;
            }
            refreshedAt = now;
            try {
                // Names only: the running counts of CapStore.list() would read every claim row.
                inDatabase = store.cappedQueues();
            } catch (RuntimeException e) {
                // The last view stands; the capped path re-reads the cap under its lock anyway.
                log.debug("Could not read the queues' concurrency caps: {}", e.toString());
            }
        }
    }
}

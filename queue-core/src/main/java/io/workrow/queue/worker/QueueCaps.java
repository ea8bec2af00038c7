package io.workrow.queue.worker;

import io.workrow.queue.store.CapStore;
import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which queues have a cluster-wide or a per-key concurrency cap, as this runtime knows it: the caps
 * it configured, and every cap in the database as of its last look, taken at most once a
 * {@link #REFRESH} by whichever poller asks. A queue with a cluster-wide cap runs within this
 * node's share of it ({@link CapShare}); one with a per-key cap claims under the queue's cap lock
 * ({@code ClaimStore.claimCapped}). A cap set by hand on a queue not capped before applies here
 * from the next refresh.
 */
final class QueueCaps {

    /** How stale this runtime's view of the caps set by hand may be. */
    static final Duration REFRESH = Duration.ofSeconds(2);

    private static final Logger log = LoggerFactory.getLogger(QueueCaps.class);

    private final CapStore store;
    private final Set<String> configuredGlobal;
    private final Set<String> configuredPerKey;
    private volatile CapStore.CappedQueues inDatabase = new CapStore.CappedQueues(Set.of(), Set.of());
    private volatile long refreshedAt = System.nanoTime() - 2 * REFRESH.toNanos();

    QueueCaps(CapStore store, Set<String> configuredGlobal, Set<String> configuredPerKey) {
        this.store = store;
        this.configuredGlobal = Set.copyOf(configuredGlobal);
        this.configuredPerKey = Set.copyOf(configuredPerKey);
    }

    /** Whether {@code queue} has a cluster-wide cap: its jobs then start within this node's share of it. */
    boolean globallyCapped(String queue) {
        if (configuredGlobal.contains(queue)) {
            return true;
        }
        refreshIfStale();
        return inDatabase.global().contains(queue);
    }

    /** Whether {@code queue}'s claims must take the key-capped path. */
    boolean keyCapped(String queue) {
        if (configuredPerKey.contains(queue)) {
            return true;
        }
        refreshIfStale();
        return inDatabase.perKey().contains(queue);
    }

    /**
     * Whether {@code queue} has a per-key cap as this runtime last saw the caps, without looking
     * again: for the handler threads and the result writer, which must not wait on the database for
     * it.
     */
    boolean knownKeyCapped(String queue) {
        return configuredPerKey.contains(queue) || inDatabase.perKey().contains(queue);
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
                // The last view stands; a share's resize and a key-capped claim read the caps under
                // the queue's lock anyway.
                log.debug("Could not read the queues' concurrency caps: {}", e.toString());
            }
        }
    }
}

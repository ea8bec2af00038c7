package io.workrow.queue.store;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** The named parameters of the ordered and fair claims, which take them by name rather than position. */
final class ClaimParameters {

    /**
     * The most claim-order rows an ordered claim reads before it looks for key heads one by one.
     * Small on purpose: with few keys a long walk finds no more heads than the key-by-key scan and
     * costs every claim its rows (claims of up to 2,000 over 64 keys walked 4,096 rows and drained
     * 4,240 jobs/s, against 7,386 with 256; 1,000 keys drained as fast either way).
     */
    private static final int MAX_ORDERED_WALK = 256;

    /** How many candidates per job wanted a fair claim offers to its lock. */
    private static final int FAIR_POOL_FACTOR = 8;

    private ClaimParameters() {
    }

    /** The named parameters of an ordered claim. */
    static Map<String, Object> orderedClaim(String queue, String workerId, int limit, Duration lease, boolean probes,
            int[] buckets, boolean skipFailed) {
        Map<String, Object> values = new HashMap<>();
        values.put("queue", queue);
        values.put("worker", workerId);
        values.put("limit", limit);
        values.put("lease_ms", lease.toMillis());
        values.put("probes", probes);
        values.put("buckets", buckets);
        values.put("skip_failed", skipFailed);
        // Enough claim-order rows to find a batch of heads among the owned share of the buckets.
        values.put("walk", (int) Math.min(MAX_ORDERED_WALK, 4L * limit * 1024 / Math.max(1, buckets.length)));
        return values;
    }

    /** The named parameters of a claim under a per-key cap of {@code keyCap}. */
    static Map<String, Object> keyCappedClaim(String queue, String workerId, int limit, Duration lease,
            boolean probes, int keyCap) {
        Map<String, Object> values = new HashMap<>();
        values.put("queue", queue);
        values.put("worker", workerId);
        values.put("limit", limit);
        values.put("lease_ms", lease.toMillis());
        values.put("probes", probes);
        values.put("key_cap", keyCap);
        return values;
    }

    static Map<String, Object> fairClaim(String queue, String workerId, int limit, Duration lease,
            boolean probes) {
        Map<String, Object> values = new HashMap<>();
        values.put("queue", queue);
        values.put("worker", workerId);
        values.put("limit", limit);
        // Candidates offered to the lock: enough that claims on several nodes at once each fill a batch.
        values.put("pool", FAIR_POOL_FACTOR * limit);
        values.put("lease_ms", lease.toMillis());
        values.put("probes", probes);
        return values;
    }
}

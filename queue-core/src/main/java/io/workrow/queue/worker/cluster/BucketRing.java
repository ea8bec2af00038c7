package io.workrow.queue.worker.cluster;

import io.workrow.queue.client.PartitionBuckets;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Which live worker owns each of the 1,024 partition buckets of an ordered queue, by rendezvous
 * (highest random weight) hashing: each bucket goes to the worker with the highest score for it.
 * Every node computes the same owners from the same list of workers, with no coordination. A
 * worker that joins takes only the buckets where it scores highest, about 1/N of them; a worker
 * that leaves gives up only its own buckets, each to the worker that scored next highest.
 *
 * <p>The score depends only on the worker id's bytes and the bucket number, through FNV-1a and the
 * SplitMix64 finalizer: plain arithmetic that is the same on every JVM.
 */
public final class BucketRing {

    /** Buckets per queue, the partition buckets jobs are put in at enqueue. */
    public static final int BUCKETS = PartitionBuckets.COUNT;

    private BucketRing() {
    }

    /** The owner of each bucket, by index; all {@code null} when there are no workers. */
    public static String[] owners(Collection<String> workers) {
        String[] owners = new String[BUCKETS];
        long[] best = new long[BUCKETS];
        for (String worker : workers) {
            long seed = fnv1a(worker);
            for (int bucket = 0; bucket < BUCKETS; bucket++) {
                long score = score(seed, bucket);
                // Ties (astronomically rare) go to the smaller id, so every node agrees.
                if (owners[bucket] == null || Long.compareUnsigned(score, best[bucket]) > 0
                        || (score == best[bucket] && worker.compareTo(owners[bucket]) < 0)) {
                    owners[bucket] = worker;
                    best[bucket] = score;
                }
            }
        }
        return owners;
    }

    /** The buckets {@code worker} owns among {@code workers}, ascending. */
    public static int[] ownedBy(String worker, Collection<String> workers) {
        String[] owners = owners(workers);
        List<Integer> owned = new ArrayList<>();
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            if (worker.equals(owners[bucket])) {
                owned.add(bucket);
            }
        }
        return owned.stream().mapToInt(Integer::intValue).toArray();
    }

    private static long score(long seed, int bucket) {
        long z = seed + (bucket + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static long fnv1a(String text) {
        long hash = 0xCBF29CE484222325L;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xFF;
            hash *= 0x100000001B3L;
        }
        return hash;
    }
}

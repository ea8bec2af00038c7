package io.workrow.queue.worker;

import io.workrow.queue.worker.cluster.BucketRing;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class BucketRingTests {

    /**
     * Worker ids as WorkerId makes them, their random part drawn from a seeded generator: the
     * spread over 500 sets is measured, and the same sets every run keep a 4-sigma draw from
     * failing one build in fifty.
     */
    private final Random random = new Random(20261124);

    private List<String> workers(int count) {
        List<String> workers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            workers.add("host-" + i + ":" + (1000 + i) + ":" + uuid().toString().substring(0, 8));
        }
        return workers;
    }

    private UUID uuid() {
        return new UUID(random.nextLong(), random.nextLong());
    }

    @Test
    void everyBucketHasExactlyOneOwnerWhateverTheOrderOfTheList() {
        List<String> workers = workers(5);
        String[] owners = BucketRing.owners(workers);
        List<String> reversed = new ArrayList<>(workers);
        java.util.Collections.reverse(reversed);
        assertThat(BucketRing.owners(reversed)).containsExactly(owners);
        assertThat(owners).doesNotContainNull().hasSize(BucketRing.BUCKETS);
        int total = workers.stream().mapToInt(worker -> BucketRing.ownedBy(worker, workers).length).sum();
        assertThat(total).isEqualTo(BucketRing.BUCKETS);
    }

    @Test
    void scoresArePinnedSoEveryNodeAndEveryVersionAgrees() {
        // A change of the hash would move every bucket of every ordered queue at a rolling deploy.
        assertThat(Arrays.copyOf(BucketRing.ownedBy("a", List.of("a", "b")), 5)).containsExactly(0, 1, 2, 3, 6);
    }

    @Test
    void aJoiningWorkerTakesOnlyBucketsForItselfAndALeavingOneGivesUpOnlyItsOwn() {
        int trials = 500;
        long movedTotal = 0;
        long minMoved = Long.MAX_VALUE;
        long maxMoved = 0;
        for (int trial = 0; trial < trials; trial++) {
            List<String> four = workers(4);
            String[] before = BucketRing.owners(four);
            List<String> five = new ArrayList<>(four);
            String joiner = "joiner:" + uuid();
            five.add(joiner);
            String[] afterJoin = BucketRing.owners(five);
            long moved = 0;
            for (int bucket = 0; bucket < BucketRing.BUCKETS; bucket++) {
                if (!before[bucket].equals(afterJoin[bucket])) {
                    assertThat(afterJoin[bucket]).isEqualTo(joiner);
                    moved++;
                }
            }
            movedTotal += moved;
            minMoved = Math.min(minMoved, moved);
            maxMoved = Math.max(maxMoved, moved);
            // 1024/5 = 204.8, with a binomial spread of 12.8: four of them either way.
            assertThat(moved).as("1024/5 within a quarter").isBetween(154L, 256L);

            String leaver = five.get(trial % 5);
            List<String> remaining = new ArrayList<>(five);
            remaining.remove(leaver);
            String[] afterLeave = BucketRing.owners(remaining);
            for (int bucket = 0; bucket < BucketRing.BUCKETS; bucket++) {
                if (!afterJoin[bucket].equals(afterLeave[bucket])) {
                    assertThat(afterJoin[bucket]).isEqualTo(leaver);
                }
            }
        }
        double mean = (double) movedTotal / trials;
        System.out.printf("a 5th worker joining 4 moved %.1f buckets on average (min %d, max %d) over %d worker sets;"
                + " 1024/5 = 204.8%n", mean, minMoved, maxMoved, trials);
        assertThat(mean).isBetween(204.8 * 0.95, 204.8 * 1.05);
    }
}

package io.workrow.queue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PartitionBucketsTests {

    @Test
    void sameKeyAlwaysGivesTheSameBucket() {
        // Pinned values: buckets are stored in rows, so the hash must never change between versions.
        assertThat(PartitionBuckets.of("order:9182")).isEqualTo(193);
        assertThat(PartitionBuckets.of("order:9182")).isEqualTo(PartitionBuckets.of("order:9182"));
    }

    @Test
    void keysSpreadOverTheBuckets() {
        Set<Integer> buckets = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            int bucket = PartitionBuckets.of("customer:" + i);
            assertThat(bucket).isBetween(0, 1023);
            buckets.add(bucket);
        }
        assertThat(buckets.size()).isGreaterThan(1000);
    }

    @Test
    void jobsWithoutKeyGetAValidBucket() {
        for (int i = 0; i < 1000; i++) {
            assertThat(PartitionBuckets.of(null)).isBetween(0, 1023);
        }
    }
}

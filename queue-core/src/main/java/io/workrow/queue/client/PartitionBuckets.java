package io.workrow.queue.client;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

/**
 * Maps partition keys to the 1,024 buckets of {@code partition_bucket}. The hash is CRC-32 of the
 * key's UTF-8 bytes, modulo 1,024: stable across JVMs, versions and languages, so any producer
 * puts a key in the same bucket, and the bucket can later be the partitioning column.
 */
public final class PartitionBuckets {

    /** Number of buckets; {@code partition_bucket} is in {@code 0..COUNT-1}. */
    public static final int COUNT = 1024;

    private PartitionBuckets() {
    }

    /** The bucket of {@code partitionKey}; a job without a key gets a random bucket, spreading load. */
    public static int of(String partitionKey) {
        if (partitionKey == null) {
            return ThreadLocalRandom.current().nextInt(COUNT);
        }
        CRC32 crc = new CRC32();
        crc.update(partitionKey.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % COUNT);
    }
}

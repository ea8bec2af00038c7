package io.workrow.queue;

import java.time.Instant;

/**
 * An operator's setting for one fairness key of one fair queue (a row of
 * {@code workrow_fairness_key}), read by every node at its next claim.
 *
 * @param fairnessKey the key; {@value #KEYLESS} stands for the queue's jobs without a key
 * @param weight the key's share of a weighted queue against the default 1, or {@code null} for 1
 * @param ratePerMinute the key's rate on a burst or spaced queue, or {@code null} for the queue's
 *     {@code rate-per-minute}
 */
public record FairnessSetting(String queue, String fairnessKey, Double weight, Integer ratePerMinute,
        Instant updatedAt) {

    /** The key that stands for a fair queue's jobs with neither a fairness nor a partition key (or an empty one). */
    public static final String KEYLESS = "";

    public FairnessSetting {
        if (weight != null && !(weight > 0 && Double.isFinite(weight))) {
            throw new IllegalArgumentException("weight must be a positive number, was " + weight);
        }
        if (ratePerMinute != null && ratePerMinute < 1) {
            throw new IllegalArgumentException("rate per minute must be at least 1, was " + ratePerMinute);
        }
    }
}

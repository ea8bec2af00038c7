package io.workrow.queue.worker;

/**
 * A queue's fair queuing: how its work is shared among fairness keys, and for {@link FairnessMode#BURST}
 * and {@link FairnessMode#SPACED} each key's rate unless an operator set one for the key
 * ({@code QueueAdmin.setFairness}).
 */
public record FairnessOptions(FairnessMode mode, int ratePerMinute) {

    /** The default rate per key of burst and spaced queues. */
    public static final int DEFAULT_RATE_PER_MINUTE = 60;

    /** Not fair. */
    public static final FairnessOptions NONE = new FairnessOptions(FairnessMode.NONE, DEFAULT_RATE_PER_MINUTE);

    public FairnessOptions {
        if (mode == null) {
            throw new IllegalArgumentException("fairness.mode must be set (FairnessMode.NONE for none)");
        }
        Settings.requireAtLeast("fairness.rate-per-minute", 1, ratePerMinute);
    }

    /** Keys share the queue by weight. */
    public static FairnessOptions weighted() {
        return new FairnessOptions(FairnessMode.WEIGHTED, DEFAULT_RATE_PER_MINUTE);
    }

    /** At most {@code ratePerMinute} starts per key and minute. */
    public static FairnessOptions burst(int ratePerMinute) {
        return new FairnessOptions(FairnessMode.BURST, ratePerMinute);
    }

    /** One start per key every {@code 1 / ratePerMinute} minutes. */
    public static FairnessOptions spaced(int ratePerMinute) {
        return new FairnessOptions(FairnessMode.SPACED, ratePerMinute);
    }

    public boolean fair() {
        return mode != FairnessMode.NONE;
    }
}

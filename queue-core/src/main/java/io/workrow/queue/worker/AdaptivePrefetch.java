package io.workrow.queue.worker;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The prefetch of a queue that did not fix one: about {@link #HORIZON} of its handlers' measured
 * throughput, between zero and a ceiling (two claims).
 *
 * <p>Jobs claimed ahead pay only while handlers are short: then a claim's round trip, not the
 * handler, is the cost of a job, and a line lets the next claim overlap the running handlers.
 * With slow handlers a line would hoard work other nodes could run and count its wait as lag, and
 * it buys nothing, since one claim per slot is cheap beside the handler. Throughput tells the two
 * apart without a setting: the line holds what the handlers finish in a tenth of a second, so 8
 * handlers of 1 ms keep up to 800 jobs in line and 8 handlers of 1 s keep none. The throughput is
 * a moving average of the finishes the poller sees between its claims, each sample weighted by the
 * time it spans ({@link #MEMORY}), so the line grows within a few claims when a backlog of short
 * jobs arrives, and an idle second forgets a drain: a burst of slow jobs after it finds no line.
 * Jobs already in line when handlers slow are not handed back: they wait out their turn, leases
 * renewed, which the ceiling bounds.
 */
final class AdaptivePrefetch {

    /** How much of the handlers' work the line holds. */
    static final Duration HORIZON = Duration.ofMillis(100);

    /** The shortest span a throughput sample covers: shorter ones are noise from a claim or two. */
    private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /**
     * How long the average remembers: a sample spanning this much time weighs 1 - 1/e (63 %) of
     * it, so an idle second leaves under 1 % of a drain's rate.
     */
    static final Duration MEMORY = Duration.ofMillis(200);

    private final int ceiling;
    /** The rate at which the line reaches its ceiling: more is no news, and would take longer to forget. */
    private final double mostJobsPerSecond;
    private final LongAdder finished = new LongAdder();
    /** Poller thread only, from here to {@link #jobsPerSecond}. */
    private long sampledAtNanos;
    private long finishedAtSample;
    private double jobsPerSecond = -1;
    private volatile int current;

    AdaptivePrefetch(int ceiling) {
        this.ceiling = ceiling;
        this.mostJobsPerSecond = ceiling * 1e9 / HORIZON.toNanos();
    }

    /** Measures from now on: the time before the poller ran, with no finishes, is no sample. Poller thread. */
    void begin(long nowNanos) {
        sampledAtNanos = nowNanos;
        finishedAtSample = finished.sum();
    }

    /** A handler finished a job (any outcome). Any thread. */
    void finished() {
        finished.increment();
    }

    /** The prefetch now. Any thread. */
    int current() {
        return current;
    }

    /** Folds in the finishes since the last sample, when a sample's span has passed; poller thread. */
    int update(long nowNanos) {
        long span = nowNanos - sampledAtNanos;
        if (span < SAMPLE_NANOS) {
            return current;
        }
        long total = finished.sum();
        double sample = Math.min(mostJobsPerSecond, (total - finishedAtSample) * 1e9 / span);
        double weight = 1 - Math.exp(-(double) span / MEMORY.toNanos());
        jobsPerSecond = jobsPerSecond < 0 ? sample : weight * sample + (1 - weight) * jobsPerSecond;
        sampledAtNanos = nowNanos;
        finishedAtSample = total;
        long wanted = (long) (jobsPerSecond * HORIZON.toNanos() / 1e9);
        current = (int) Math.min(ceiling, wanted);
        return current;
    }
}

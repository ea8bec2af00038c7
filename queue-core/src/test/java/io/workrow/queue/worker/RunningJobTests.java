package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.store.ClaimedPosition;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * What a held job knows of its lease: it runs from when the claim or the last renewal that found
 * it was sent, and a job whose lease may be running out is not started (the fault suite's
 * SIGSTOP scenario shows the whole of it: no handler starts without its lease).
 */
class RunningJobTests {

    private static final Duration LEASE = Duration.ofSeconds(3);

    @Test
    void aLeaseConfirmedRecentlyIsNotRunningOut() {
        assertThat(held(System.nanoTime()).leaseRunningOut()).isFalse();
        assertThat(held(System.nanoTime() - LEASE.toNanos() / 2).leaseRunningOut()).as("half left").isFalse();
    }

    @Test
    void aLeaseUnconfirmedForTwoThirdsOfItIsRunningOutUntilARenewalFindsIt() {
        RunningJob job = held(System.nanoTime() - LEASE.toNanos() * 3 / 4);
        assertThat(job.leaseRunningOut()).isTrue();
        job.leaseConfirmed(System.nanoTime() - LEASE.toNanos());
        assertThat(job.leaseRunningOut()).as("an older confirmation changes nothing").isTrue();
        job.leaseConfirmed(System.nanoTime());
        assertThat(job.leaseRunningOut()).isFalse();
    }

    private static RunningJob held(long claimSentNanos) {
        ClaimedPosition job = new ClaimedPosition(7, 1, 1, "lease", null, null, "{}", "{}", 1, 5, 0, null, Instant.now(), null,
                null);
        HandlerRegistration registration = new HandlerRegistration("lease", Object.class, (payload, context) -> {
        }, QueueOptions.defaults().withLease(LEASE));
        return new RunningJob(job, registration, claimSentNanos);
    }
}

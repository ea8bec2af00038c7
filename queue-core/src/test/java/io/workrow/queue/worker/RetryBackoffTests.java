package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryBackoffTests {

    @Test
    void growsExponentiallyUpToTheCeiling() {
        RetryBackoff backoff = new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10), 0.0);
        assertThat(backoff.delayAfter(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.delayAfter(2)).isEqualTo(Duration.ofSeconds(2));
        assertThat(backoff.delayAfter(4)).isEqualTo(Duration.ofSeconds(8));
        assertThat(backoff.delayAfter(5)).isEqualTo(Duration.ofSeconds(10));
        assertThat(backoff.delayAfter(500)).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void jitterStaysWithinItsFractionAndUnderTheCeiling() {
        RetryBackoff backoff = new RetryBackoff(Duration.ofSeconds(10), 2.0, Duration.ofSeconds(15), 0.2);
        for (int i = 0; i < 1000; i++) {
            assertThat(backoff.delayAfter(1).toMillis()).isBetween(8_000L, 12_000L);
            assertThat(backoff.delayAfter(3).toMillis()).isBetween(12_000L, 15_000L);
        }
    }

    @Test
    void invalidSettingsNameTheSetting() {
        assertThatIllegalArgumentException().isThrownBy(() ->
                new RetryBackoff(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(10), 0.1))
                .withMessage("backoff.multiplier must be at least 1.0, was 0.5");
        assertThatIllegalArgumentException().isThrownBy(() ->
                new RetryBackoff(Duration.ofSeconds(-1), 2, Duration.ofSeconds(10), 0.1))
                .withMessageContaining("backoff.initial must be positive");
        assertThatIllegalArgumentException().isThrownBy(() ->
                new RetryBackoff(Duration.ofSeconds(1), 2, Duration.ofSeconds(10), 1.5))
                .withMessageContaining("backoff.jitter");
        assertThatIllegalArgumentException().isThrownBy(() ->
                new RetryBackoff(Duration.ofSeconds(10), 2, Duration.ofSeconds(1), 0.1))
                .withMessageContaining("backoff.max must not be below backoff.initial");
    }
}

package io.workrow.queue.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.workrow.queue.BreakerStatus;
import org.junit.jupiter.api.Test;

/** The series a dashboard or an alert needs exist before their first event, and every meter has help text. */
class MeterHelpTests {

    @Test
    void aGuardedQueueHasItsBreakerCountersAtZeroBeforeItsFirstTransition() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerQueueMetrics metrics = new MicrometerQueueMetrics(registry);
        metrics.registerBreaker("mail");
        for (BreakerStatus.State state : BreakerStatus.State.values()) {
            assertThat(registry.get("workrow.breaker.transitions").tag("queue", "mail")
                    .tag("state", state.columnValue()).counter().count()).isZero();
        }
        metrics.breakerTransition("mail", BreakerStatus.State.OPEN);
        assertThat(registry.get("workrow.breaker.transitions").tag("state", "open").counter().count()).isEqualTo(1);
    }

    @Test
    void theHandlerSlotsGaugeSaysWhatThisNodeGivesTheQueueAndZeroOnceItStops() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerQueueMetrics metrics = new MicrometerQueueMetrics(registry);
        assertThat(registry.find("workrow.queue.handlers").gauges()).isEmpty();
        metrics.handlers("mail", 8);
        assertThat(registry.get("workrow.queue.handlers").tag("queue", "mail").gauge().value()).isEqualTo(8);
        metrics.handlers("mail", 0);
        assertThat(registry.get("workrow.queue.handlers").tag("queue", "mail").gauge().value()).isZero();
        assertThat(registry.find("workrow.queue.handlers").gauges()).hasSize(1);
    }

    @Test
    void theObservationsTimersGetADescriptionAndOtherMetersKeepTheirs() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(new ObservationMeterDescriptions());
        Timer job = Timer.builder("workrow.job").tag("queue", "mail").register(registry);
        LongTaskTimer active = LongTaskTimer.builder("workrow.job.active").register(registry);
        Timer enqueue = Timer.builder("workrow.enqueue").register(registry);
        Timer described = Timer.builder("workrow.enqueue.active").description("as the application says").register(registry);
        Timer other = Timer.builder("http.server.requests").register(registry);
        assertThat(job.getId().getDescription()).startsWith("Handler runs");
        assertThat(job.getId().getTag("queue")).isEqualTo("mail");
        assertThat(active.getId().getDescription()).startsWith("Handler runs in progress");
        assertThat(enqueue.getId().getDescription()).startsWith("Enqueues");
        assertThat(described.getId().getDescription()).isEqualTo("as the application says");
        assertThat(other.getId().getDescription()).isNull();
    }
}

package io.workrow.queue.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.workrow.queue.maintenance.MaintenanceScheduler;
import io.workrow.queue.metrics.MicrometerQueueMetrics;
import io.workrow.queue.metrics.ObservationMeterDescriptions;
import io.workrow.queue.maintenance.QueueDepthGauges;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.spring.handler.QueueHandlerDiscoverer;
import io.workrow.queue.spring.lifecycle.MaintenanceLifecycle;
import io.workrow.queue.store.JobStore;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Workrow's meters when the application has a {@link MeterRegistry}: the counters and timer of
 * {@link MicrometerQueueMetrics}, descriptions for the observations' timers, and the depth and lag gauges refreshed every
 * {@code workrow.metrics.refresh-interval} by one query. Without Micrometer nothing is bound and
 * the engine reports to {@link QueueMetrics#NOOP}.
 */
@AutoConfiguration(after = WorkrowAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({MeterRegistry.class, JobStore.class})
public final class WorkrowMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(QueueMetrics.class)
    MicrometerQueueMetrics workrowQueueMetrics(MeterRegistry registry) {
        return new MicrometerQueueMetrics(registry);
    }

    /** Help text for the timers of the {@code workrow.job} and {@code workrow.enqueue} observations. */
    @Bean
    static ObservationMeterDescriptions workrowObservationMeterDescriptions() {
        return new ObservationMeterDescriptions();
    }

    @Bean
    @ConditionalOnMissingBean(name = "workrowQueueGauges")
    MaintenanceLifecycle workrowQueueGauges(JobStore store, MeterRegistry registry, WorkrowSettings settings,
            ObjectProvider<QueueHandlerDiscoverer> handlers) {
        return new MaintenanceLifecycle(() -> {
            // Built at start, when every handler is known: their queues report from the first scrape.
            Set<String> known = new TreeSet<>(settings.configuredQueues());
            handlers.ifAvailable(found -> found.handlers().forEach(handler -> known.add(handler.queue())));
            return new MaintenanceScheduler().every(settings.properties().getMetrics().getRefreshInterval(),
                    new QueueDepthGauges(store, registry, known));
        });
    }
}

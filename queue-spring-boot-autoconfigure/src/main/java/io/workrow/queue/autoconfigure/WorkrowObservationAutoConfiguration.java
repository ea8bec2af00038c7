package io.workrow.queue.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import io.workrow.queue.metrics.EnqueueHeaders;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.ObservationJobObserver;
import io.workrow.queue.metrics.ObservationTraceHeaders;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Tracing across the queue when the application has an {@link ObservationRegistry}: the trace
 * context at enqueue goes into each job's headers, and each handler run is a {@code workrow.job}
 * observation whose parent is that context.
 */
@AutoConfiguration(before = WorkrowAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
public final class WorkrowObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    EnqueueHeaders workrowTraceHeaders(ObservationRegistry registry) {
        return new ObservationTraceHeaders(registry);
    }

    @Bean
    @ConditionalOnMissingBean
    JobObserver workrowJobObserver(ObservationRegistry registry) {
        return new ObservationJobObserver(registry);
    }
}

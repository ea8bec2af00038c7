package io.workrow.queue.autoconfigure;

import io.workrow.queue.QueueAdmin;
import io.workrow.queue.spring.actuate.WorkrowEndpoint;
import io.workrow.queue.spring.actuate.WorkrowHealthIndicator;
import io.workrow.queue.spring.actuate.WorkrowLagHealthIndicator;
import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.store.JobStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code workrow} health indicator and actuator endpoint, each when its module is present. */
@AutoConfiguration(after = {WorkrowAutoConfiguration.class, WorkrowWorkerAutoConfiguration.class})
@ConditionalOnBean(JobStore.class)
public final class WorkrowActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("workrow")
    static class Health {

        @Bean
        @ConditionalOnMissingBean(name = "workrowHealthIndicator")
        WorkrowHealthIndicator workrowHealthIndicator(JobStore store, WorkrowSettings settings,
                ObjectProvider<WorkerRuntimeLifecycle> runtime) {
            return new WorkrowHealthIndicator(store,
                    () -> runtime.getIfAvailable() == null ? null : runtime.getIfAvailable().runtime(),
                    settings.properties().getHealth().getListenerTimeout());
        }

        @Bean
        @ConditionalOnMissingBean(name = "workrowLagHealthIndicator")
        @ConditionalOnBooleanProperty("workrow.health.lag-enabled")
        WorkrowLagHealthIndicator workrowLagHealthIndicator(JobStore store, WorkrowSettings settings) {
            return new WorkrowLagHealthIndicator(store, settings::maxLag,
                    settings.properties().getMetrics().getRefreshInterval());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    @ConditionalOnAvailableEndpoint(WorkrowEndpoint.class)
    static class Actuator {

        @Bean
        @ConditionalOnMissingBean
        WorkrowEndpoint workrowEndpoint(QueueAdmin admin) {
            return new WorkrowEndpoint(admin);
        }
    }
}

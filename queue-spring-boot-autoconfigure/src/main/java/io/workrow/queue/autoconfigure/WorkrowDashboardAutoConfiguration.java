package io.workrow.queue.autoconfigure;

import io.workrow.queue.QueueAdmin;
import io.workrow.queue.spring.dashboard.ActuatorDashboardWrites;
import io.workrow.queue.spring.dashboard.DashboardController;
import io.workrow.queue.spring.dashboard.DashboardWrites;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * The dashboard page under {@code workrow.dashboard.path}, in servlet web applications with
 * Spring MVC when {@code workrow.dashboard.enabled} is true. Its writes go to the {@code workrow}
 * actuator endpoint; without the actuator the page is read-only.
 */
@AutoConfiguration(after = WorkrowActuatorAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty("workrow.dashboard.enabled")
@ConditionalOnBean(QueueAdmin.class)
public final class WorkrowDashboardAutoConfiguration {

    /** The writes the page offers, decided by the workrow endpoint. */
    static final String WRITES_BEAN = "workrowDashboardWrites";

    @Bean
    @ConditionalOnMissingBean
    DashboardController workrowDashboardController(QueueAdmin admin, WorkrowSettings settings,
            @Qualifier(WRITES_BEAN) Supplier<DashboardWrites> writes) {
        WorkrowProperties.Dashboard dashboard = settings.properties().getDashboard();
        return DashboardController.create(admin, dashboard.getPath(), dashboard.isShowPayloads(),
                dashboard.getRefreshInterval(), writes);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType")
    static class WithActuator {

        @Bean(WRITES_BEAN)
        @ConditionalOnMissingBean(name = WRITES_BEAN)
        Supplier<DashboardWrites> workrowDashboardWrites(ObjectProvider<EndpointAccessResolver> access,
                ObjectProvider<PathMappedEndpoints> endpoints, Environment environment) {
            return new ActuatorDashboardWrites(access, endpoints, environment);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType")
    static class WithoutActuator {

        @Bean(WRITES_BEAN)
        @ConditionalOnMissingBean(name = WRITES_BEAN)
        Supplier<DashboardWrites> workrowDashboardWrites() {
            return () -> DashboardWrites.readOnly(
                    "Read-only: the page writes through the workrow actuator endpoint; add spring-boot-starter-actuator "
                            + "and set management.endpoint.workrow.access=unrestricted.");
        }
    }
}

package io.workrow.queue.spring.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.autoconfigure.WorkrowActuatorAutoConfiguration;
import io.workrow.queue.autoconfigure.WorkrowAutoConfiguration;
import io.workrow.queue.autoconfigure.WorkrowDashboardAutoConfiguration;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/** When the dashboard is there, and what it says about writes. */
class DashboardAutoConfigurationTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(WorkrowAutoConfiguration.class,
                    WorkrowActuatorAutoConfiguration.class, WorkrowDashboardAutoConfiguration.class,
                    EndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class))
            .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
            .withPropertyValues("workrow.enabled=false");

    @SuppressWarnings("unchecked")
    private static DashboardWrites writes(org.springframework.context.ApplicationContext context) {
        return ((Supplier<DashboardWrites>) context.getBean("workrowDashboardWrites")).get();
    }

    @Test
    void offUnlessEnabled() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DashboardController.class));
        runner.withPropertyValues("workrow.dashboard.enabled=true")
                .run(context -> assertThat(context).hasSingleBean(DashboardController.class));
    }

    @Test
    void aPathThatIsNotPlainFailsStartUpNamingTheProperty() {
        for (String path : new String[] {"workrow", "/workrow/", "/{queue}", "/ops/../x", "/a b"}) {
            runner.withPropertyValues("workrow.dashboard.enabled=true", "workrow.dashboard.path=" + path)
                    .run(context -> assertThat(context).getFailure().rootCause()
                            .hasMessageContaining("workrow.dashboard.path"));
        }
    }

    /** The runner binds enum values by name; a whole application also takes them in lower case. */
    @Test
    void readOnlyByDefaultAndSaysWhatWouldAllowWrites() {
        runner.withPropertyValues("workrow.dashboard.enabled=true",
                "management.endpoints.web.exposure.include=workrow").run(context -> {
                    assertThat(writes(context).allowed()).isFalse();
                    assertThat(writes(context).reason()).contains("management.endpoint.workrow.access=unrestricted");
                });
        runner.withPropertyValues("workrow.dashboard.enabled=true", "management.endpoint.workrow.access=UNRESTRICTED")
                .run(context -> assertThat(writes(context).reason())
                        .contains("not exposed", "management.endpoints.web.exposure.include"));
        runner.withPropertyValues("workrow.dashboard.enabled=true", "management.endpoint.workrow.access=UNRESTRICTED",
                "management.endpoints.web.exposure.include=workrow", "management.server.port=0")
                .run(context -> assertThat(writes(context).reason()).contains("another port"));
        runner.withPropertyValues("workrow.dashboard.enabled=true", "management.endpoint.workrow.access=UNRESTRICTED",
                "management.endpoints.web.exposure.include=workrow")
                .run(context -> assertThat(writes(context).endpointPath()).isEqualTo("/actuator/workrow"));
        runner.withPropertyValues("workrow.dashboard.enabled=true", "management.endpoint.workrow.access=UNRESTRICTED",
                "management.endpoints.access.max-permitted=READ_ONLY",
                "management.endpoints.web.exposure.include=workrow")
                .run(context -> assertThat(writes(context).allowed()).as("capped by max-permitted").isFalse());
    }

    @Test
    void withoutTheActuatorThePageIsReadOnly() {
        new WebApplicationContextRunner().withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .withConfiguration(AutoConfigurations.of(WorkrowAutoConfiguration.class,
                        WorkrowDashboardAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(database.dataSource()))
                .withPropertyValues("workrow.enabled=false", "workrow.dashboard.enabled=true").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(writes(context).reason()).contains("spring-boot-starter-actuator");
                });
    }
}

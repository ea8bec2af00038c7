package io.workrow.queue.test;

import io.workrow.queue.test.database.TestDatabase;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.spring.handler.HandlerMethod;
import io.workrow.queue.spring.handler.QueueHandlerDiscoverer;
import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.store.JobStore;
import java.lang.reflect.Type;
import java.util.Map;
import java.util.Objects;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Gives one test class's context a database of its own, the workers' start setting, and the
 * {@link WorkrowTester} bean. Equal only for the same test class and setting, so no other class
 * shares the context (and its database) from Spring's context cache, except the class's own
 * {@code @Nested} classes, keyed on it.
 */
final class WorkrowTestContextCustomizer implements ContextCustomizer {

    private static final String TESTER_BEAN = "workrowTester";
    private static final String DATABASE_DROP = "workrowTestDatabaseDrop";
    private static final String PROPERTY_SOURCE = "workrowTest";

    private final Class<?> testClass;
    private final boolean startWorkers;

    WorkrowTestContextCustomizer(Class<?> testClass, boolean startWorkers) {
        this.testClass = testClass;
        this.startWorkers = startWorkers;
    }

    @Override
    public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
        TestDatabase database = TestDatabase.createFor(testClass);
        // First among the property sources: the class's database and worker start win over the
        // test's own properties, which could otherwise point it at a shared database.
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, Map.of(
                "spring.datasource.url", database.jdbcUrl(),
                "spring.datasource.username", database.user(),
                "spring.datasource.password", database.password(),
                "workrow.auto-startup", Boolean.toString(startWorkers))));
        ConfigurableListableBeanFactory beans = context.getBeanFactory();
        // Registered before any bean exists, so destroyed after every one: the pool is closed by then.
        ((DefaultSingletonBeanRegistry) beans).registerDisposableBean(DATABASE_DROP, database::drop);
        RootBeanDefinition tester = new RootBeanDefinition(WorkrowTester.class, () -> tester(beans));
        // Created when a test asks for it: the store it needs must not be made (and Workrow's
        // tables migrated) before the application's own migrations have run on the empty database.
        tester.setLazyInit(true);
        ((BeanDefinitionRegistry) beans).registerBeanDefinition(TESTER_BEAN, tester);
    }

    private static WorkrowTester tester(ConfigurableListableBeanFactory beans) {
        JobStore store = beans.getBean(JobStore.class);
        QueueHandlerDiscoverer handlers = beans.getBeanProvider(QueueHandlerDiscoverer.class).getIfAvailable();
        return new WorkrowTester(store.dataSource(), store.schema(), beans.getBean(PayloadCodec.class),
                queue -> payloadType(handlers, queue), () -> {
                    WorkerRuntimeLifecycle workers = beans.getBeanProvider(WorkerRuntimeLifecycle.class)
                            .getIfAvailable();
                    if (workers == null) {
                        throw new IllegalStateException("This application runs no Workrow workers"
                                + " (workrow.enabled=false), so there is nothing to drain with");
                    }
                    return workers.runtimeForDrain();
                });
    }

    private static Type payloadType(QueueHandlerDiscoverer handlers, String queue) {
        if (handlers == null) {
            return null;
        }
        return handlers.handlers().stream().filter(handler -> handler.queue().equals(queue))
                .map(HandlerMethod::payloadType).findFirst().orElse(null);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WorkrowTestContextCustomizer customizer && customizer.testClass == testClass
                && customizer.startWorkers == startWorkers;
    }

    @Override
    public int hashCode() {
        return Objects.hash(testClass, startWorkers);
    }
}

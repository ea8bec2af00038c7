package io.workrow.queue.test;

import io.workrow.queue.test.database.TestDatabase;
import java.util.Map;
import java.util.Objects;
import org.springframework.aot.AotDetector;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Gives one test class's context a database of its own, the workers' start setting, and the
 * {@link WorkrowTester} bean. Equal only for the same test class and setting, so no other class
 * shares the context (and its database) from Spring's context cache, except the class's own
 * {@code @Nested} classes, keyed on it. Works in Spring's AOT mode too: the bean's definition is
 * plain (a factory method, no lambda), so AOT processing can write it as code.
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
        ConfigurableListableBeanFactory beans = context.getBeanFactory();
        if (!AotDetector.useGeneratedArtifacts()) {
            // Spring's AOT processing of the test (spring.aot.processing) writes this definition
            // as code, which registers it when the test runs in AOT mode.
            RootBeanDefinition tester = new RootBeanDefinition(WorkrowTesterFactory.class);
            tester.setFactoryMethodName("workrowTester");
            tester.setTargetType(WorkrowTester.class);
            tester.setAutowireMode(AbstractBeanDefinition.AUTOWIRE_CONSTRUCTOR);
            // Created when a test asks for it: the store it needs must not be made (and Workrow's
            // tables migrated) before the application's own migrations have run on the empty database.
            tester.setLazyInit(true);
            ((BeanDefinitionRegistry) beans).registerBeanDefinition(TESTER_BEAN, tester);
        }
        if (Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
            // Processing reads the bean definitions and creates no bean: no database is needed.
            return;
        }
        TestDatabase database = TestDatabase.createFor(testClass);
        // First among the property sources: the class's database and worker start win over the
        // test's own properties, which could otherwise point it at a shared database.
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, Map.of(
                "spring.datasource.url", database.jdbcUrl(),
                "spring.datasource.username", database.user(),
                "spring.datasource.password", database.password(),
                "workrow.auto-startup", Boolean.toString(startWorkers))));
        // Registered before any bean exists, so destroyed after every one: the pool is closed by then.
        ((DefaultSingletonBeanRegistry) beans).registerDisposableBean(DATABASE_DROP, database::drop);
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

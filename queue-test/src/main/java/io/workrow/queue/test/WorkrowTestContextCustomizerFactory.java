package io.workrow.queue.test;

import java.util.List;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;

/** Customizes the context of each {@link WorkrowTest} class: its database, its worker start, its tester. */
final class WorkrowTestContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public ContextCustomizer createContextCustomizer(Class<?> testClass,
            List<ContextConfigurationAttributes> configAttributes) {
        TestContextAnnotationUtils.AnnotationDescriptor<WorkrowTest> declared =
                TestContextAnnotationUtils.findAnnotationDescriptor(testClass, WorkrowTest.class);
        // Keyed on the class that declares it: its @Nested classes share its context and database.
        return declared == null ? null : new WorkrowTestContextCustomizer(declared.getRootDeclaringClass(),
                declared.getAnnotation().startWorkers());
    }
}

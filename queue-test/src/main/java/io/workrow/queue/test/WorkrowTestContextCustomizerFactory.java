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
        WorkrowTest test = TestContextAnnotationUtils.findMergedAnnotation(testClass, WorkrowTest.class);
        return test == null ? null : new WorkrowTestContextCustomizer(WorkrowTestClasses.outermost(testClass),
                test.startWorkers());
    }
}

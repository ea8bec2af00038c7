package io.workrow.queue.test;

import org.springframework.core.Ordered;
import org.springframework.test.annotation.DirtiesContext.HierarchyMode;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.TestExecutionListener;

/**
 * Closes a {@link WorkrowTest} class's context, and with it drops its database, once the class
 * is done: after its own tests and all its {@code @Nested} classes', which share them. (A
 * {@code @DirtiesContext} would close it after the first nested class already.)
 */
final class WorkrowTestContextCloser implements TestExecutionListener, Ordered {

    @Override
    public void afterTestClass(TestContext testContext) {
        Class<?> testClass = testContext.getTestClass();
        if (TestContextAnnotationUtils.hasAnnotation(testClass, WorkrowTest.class)
                && WorkrowTestClasses.ownsContext(testClass)) {
            testContext.markApplicationContextDirty(HierarchyMode.EXHAUSTIVE);
        }
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}

package io.workrow.queue.test;

import org.springframework.test.context.TestContextAnnotationUtils;

/** Which class a {@link WorkrowTest}'s context and database belong to. */
final class WorkrowTestClasses {

    private WorkrowTestClasses() {
    }

    /**
     * The test class whose context {@code testClass} runs in: itself, or for a {@code @Nested}
     * class the outermost class it inherits its configuration from. Subclasses of one base class
     * are classes of their own.
     */
    static Class<?> outermost(Class<?> testClass) {
        Class<?> owner = testClass;
        while (TestContextAnnotationUtils.searchEnclosingClass(owner)) {
            owner = owner.getEnclosingClass();
        }
        return owner;
    }

    /** Whether {@code testClass} owns its context, rather than sharing its enclosing class's. */
    static boolean ownsContext(Class<?> testClass) {
        return outermost(testClass) == testClass;
    }
}

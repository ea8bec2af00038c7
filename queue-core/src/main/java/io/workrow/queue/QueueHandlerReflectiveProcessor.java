package io.workrow.queue;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.annotation.SimpleReflectiveProcessor;

/**
 * For each {@link QueueHandler @QueueHandler} method Spring's AOT processing finds on a bean: the
 * method is invoked reflectively, its payload type (generics included) is read from JSON, and what
 * it returns is written as the job's result. A {@link JobContext} parameter needs nothing. Beside
 * {@link QueueHandler}, which names it, rather than in the {@code aot} package: that package's
 * hints read the engine's packages, and the public API must not depend on them.
 */
final class QueueHandlerReflectiveProcessor extends SimpleReflectiveProcessor {

    private final BindingReflectionHintsRegistrar binding = new BindingReflectionHintsRegistrar();

    @Override
    protected void registerMethodHint(ReflectionHints hints, Method method) {
        super.registerMethodHint(hints, method);
        for (Type parameter : method.getGenericParameterTypes()) {
            if (parameter != JobContext.class) {
                binding.registerReflectionHints(hints, parameter);
            }
        }
        if (method.getReturnType() != void.class) {
            binding.registerReflectionHints(hints, method.getGenericReturnType());
        }
    }
}

package io.workrow.queue.spring.handler;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobFunction;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/**
 * A {@code @QueueHandler} method bound to its bean: which parameter is the payload (and its
 * generic type), where the {@link JobContext} goes, and how to call it through the bean's proxy so
 * that the bean's own advice ({@code @Transactional}, security) applies. What the method returns is
 * the job's result ({@code void} methods return none).
 */
public final class HandlerMethod implements JobFunction<Object, Object> {

    private final String queue;
    private final Object bean;
    private final Method invocable;
    private final Type payloadType;
    private final int payloadIndex;
    private final int contextIndex;
    private final boolean transactional;
    private final String description;

    private HandlerMethod(String queue, String beanName, Object bean, Method method, Type payloadType,
            int payloadIndex, int contextIndex, boolean transactional) {
        this.queue = queue;
        this.bean = bean;
        this.invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(invocable);
        this.payloadType = payloadType;
        this.payloadIndex = payloadIndex;
        this.contextIndex = contextIndex;
        this.transactional = transactional;
        this.description = describe(beanName, method);
    }

    /**
     * Binds {@code method} of {@code bean}; throws {@link QueueHandlerDefinitionException} naming the
     * bean and method when its parameters are not one payload and at most one {@link JobContext}.
     */
    static HandlerMethod of(String queue, String beanName, Object bean, Method method, boolean transactional) {
        Type[] parameters = method.getGenericParameterTypes();
        int payloadIndex = -1;
        int contextIndex = -1;
        for (int i = 0; i < parameters.length; i++) {
            if (parameters[i] == JobContext.class) {
                if (contextIndex >= 0) {
                    throw invalid(beanName, method, "it takes JobContext twice");
                }
                contextIndex = i;
            } else {
                if (payloadIndex >= 0) {
                    throw invalid(beanName, method, "it has more than one payload parameter");
                }
                payloadIndex = i;
            }
        }
        if (payloadIndex < 0) {
            throw invalid(beanName, method, "it has no payload parameter");
        }
        Class<?> payloadClass = method.getParameterTypes()[payloadIndex];
        if (payloadClass.isPrimitive() || payloadClass == Object.class) {
            throw invalid(beanName, method, "its payload parameter's type, " + payloadClass.getName()
                    + ", does not say how to read the payload; use a record, class or collection type");
        }
        return new HandlerMethod(queue, beanName, bean, method, parameters[payloadIndex], payloadIndex, contextIndex,
                transactional);
    }

    private static QueueHandlerDefinitionException invalid(String beanName, Method method, String reason) {
        return new QueueHandlerDefinitionException("@QueueHandler method " + describe(beanName, method)
                + " cannot handle jobs: " + reason + ". A handler takes the payload and, optionally, a JobContext.");
    }

    static String describe(String beanName, Method method) {
        return beanName + "." + method.getName() + Arrays.stream(method.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
    }

    @Override
    public Object apply(Object payload, JobContext context) throws Exception {
        Object[] arguments = new Object[contextIndex >= 0 ? 2 : 1];
        arguments[payloadIndex] = payload;
        if (contextIndex >= 0) {
            arguments[contextIndex] = context;
        }
        try {
            return invocable.invoke(bean, arguments);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    public String queue() {
        return queue;
    }

    public Type payloadType() {
        return payloadType;
    }

    public boolean isTransactional() {
        return transactional;
    }

    /** {@code bean.method(ParameterTypes)}, for logs and errors. */
    public String description() {
        return description;
    }

    @Override
    public String toString() {
        return description;
    }
}

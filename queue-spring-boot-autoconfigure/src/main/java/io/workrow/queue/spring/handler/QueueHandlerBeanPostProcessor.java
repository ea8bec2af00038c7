package io.workrow.queue.spring.handler;

import io.workrow.queue.QueueHandler;
import io.workrow.queue.client.QueueNames;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds {@link QueueHandler @QueueHandler} methods on every bean, proxied ones included (the
 * annotation is read from the target class, the call goes through the proxy), and keeps them by
 * queue. A second handler for a queue, or a method that cannot take a payload, fails start-up
 * with a message naming bean and method.
 */
public final class QueueHandlerBeanPostProcessor implements BeanPostProcessor {

    private final Map<String, HandlerMethod> handlers = Collections.synchronizedMap(new LinkedHashMap<>());

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        Map<Method, QueueHandler> annotated = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<QueueHandler>) method ->
                        AnnotatedElementUtils.findMergedAnnotation(method, QueueHandler.class));
        annotated.forEach((method, annotation) -> register(beanName, bean, method, annotation));
        return bean;
    }

    private void register(String beanName, Object bean, Method method, QueueHandler annotation) {
        String queue = annotation.value();
        try {
            QueueNames.check(queue);
        } catch (IllegalArgumentException e) {
            throw new QueueHandlerDefinitionException("@QueueHandler method " + HandlerMethod.describe(beanName, method)
                    + " names an invalid queue: " + e.getMessage());
        }
        HandlerMethod handler = HandlerMethod.of(queue, beanName, bean, method, annotation.transactional());
        HandlerMethod existing = handlers.putIfAbsent(queue, handler);
        if (existing != null && !existing.description().equals(handler.description())) {
            throw new QueueHandlerDefinitionException("Two @QueueHandler methods for queue '" + queue + "': "
                    + existing.description() + " and " + handler.description() + ". A queue has exactly one handler.");
        }
    }

    /** The handlers found so far, in discovery order. */
    public Collection<HandlerMethod> handlers() {
        synchronized (handlers) {
            return java.util.List.copyOf(handlers.values());
        }
    }
}

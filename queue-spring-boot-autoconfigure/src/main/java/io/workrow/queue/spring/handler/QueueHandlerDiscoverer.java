package io.workrow.queue.spring.handler;

import io.workrow.queue.QueueHandler;
import io.workrow.queue.client.QueueNames;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Finds {@link QueueHandler @QueueHandler} methods by bean type, when the runtime starts: lazy
 * beans are found too (and created then), a scoped proxy counts once (its hidden target bean is
 * skipped), and proxied beans are called through their proxy so their own advice applies. A second
 * handler for a queue, or a method that cannot take a payload, fails start-up with a message
 * naming bean and method.
 */
public final class QueueHandlerDiscoverer implements BeanFactoryAware {

    private ConfigurableListableBeanFactory beanFactory;
    private List<HandlerMethod> handlers;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = (ConfigurableListableBeanFactory) beanFactory;
    }

    /** Every handler in the context, in bean definition order; discovered on the first call. */
    public synchronized List<HandlerMethod> handlers() {
        if (handlers == null) {
            handlers = discover();
        }
        return handlers;
    }

    private List<HandlerMethod> discover() {
        Map<String, HandlerMethod> byQueue = new LinkedHashMap<>();
        for (String beanName : beanFactory.getBeanNamesForType(Object.class, true, false)) {
            if (ScopedProxyUtils.isScopedTarget(beanName)) {
                continue; // the scoped proxy of the same name is the handler
            }
            Class<?> type = beanFactory.getType(beanName, false);
            if (type == null) {
                continue;
            }
            if (java.lang.reflect.Proxy.isProxyClass(type)) {
                // An interface-based proxy hides the class whose methods carry the annotation.
                type = AopUtils.getTargetClass(beanFactory.getBean(beanName));
            }
            Map<Method, QueueHandler> annotated = MethodIntrospector.selectMethods(ClassUtils.getUserClass(type),
                    (MethodIntrospector.MetadataLookup<QueueHandler>) method ->
                            AnnotatedElementUtils.findMergedAnnotation(method, QueueHandler.class));
            if (annotated.isEmpty()) {
                continue;
            }
            Object bean = beanFactory.getBean(beanName);
            annotated.forEach((method, annotation) -> register(byQueue, beanName, bean, method, annotation));
        }
        return List.copyOf(byQueue.values());
    }

    private static void register(Map<String, HandlerMethod> byQueue, String beanName, Object bean, Method method,
            QueueHandler annotation) {
        String queue = annotation.value();
        try {
            QueueNames.check(queue);
        } catch (IllegalArgumentException e) {
            throw new QueueHandlerDefinitionException("@QueueHandler method " + HandlerMethod.describe(beanName, method)
                    + " names an invalid queue: " + e.getMessage());
        }
        HandlerMethod handler = HandlerMethod.of(queue, beanName, bean, method, annotation.transactional());
        HandlerMethod existing = byQueue.putIfAbsent(queue, handler);
        if (existing != null) {
            throw new QueueHandlerDefinitionException("Two @QueueHandler methods for queue '" + queue + "': "
                    + existing.description() + " and " + handler.description() + ". A queue has exactly one handler.");
        }
    }
}

package io.workrow.queue.test;

import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.spring.handler.HandlerMethod;
import io.workrow.queue.spring.handler.QueueHandlerDiscoverer;
import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.store.JobStore;
import java.lang.reflect.Type;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/** Makes the {@link WorkrowTester} bean of a {@link WorkrowTest} context, from the beans it finds then. */
final class WorkrowTesterFactory {

    private WorkrowTesterFactory() {
    }

    /** The bean's factory method (see {@code WorkrowTestContextCustomizer}). */
    static WorkrowTester workrowTester(ConfigurableListableBeanFactory beans) {
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
}

package io.workrow.queue.autoconfigure;

import io.workrow.queue.RecurringJob;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.spring.handler.HandlerMethod;
import io.workrow.queue.spring.handler.HandlerTransactionManagers;
import io.workrow.queue.spring.handler.QueueHandlerDiscoverer;
import io.workrow.queue.spring.handler.SpringHandlerTransaction;
import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.worker.ErrorDescriber;
import io.workrow.queue.worker.HandlerRegistration;
import io.workrow.queue.worker.HandlerTransaction;
import io.workrow.queue.worker.WorkerRuntime;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The workers: finds {@code @QueueHandler} methods and runs them in a {@link WorkerRuntime} tied
 * to the context's lifecycle. Off with {@code workrow.enabled=false}, for nodes that only enqueue.
 */
@AutoConfiguration(after = WorkrowAutoConfiguration.class)
@ConditionalOnBean(JobStore.class)
@ConditionalOnBooleanProperty(name = "workrow.enabled", matchIfMissing = true)
public final class WorkrowWorkerAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(WorkrowWorkerAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    QueueHandlerDiscoverer queueHandlerDiscoverer() {
        return new QueueHandlerDiscoverer();
    }

    @Bean
    @ConditionalOnMissingBean
    WorkerRuntimeLifecycle workrowWorkerRuntime(DataSource dataSource, JobStore store, PayloadCodec codec,
            WorkrowSettings settings, QueueHandlerDiscoverer handlers,
            ObjectProvider<PlatformTransactionManager> transactionManagers, ObjectProvider<QueueMetrics> metrics,
            ObjectProvider<JobObserver> observer, ObjectProvider<ErrorDescriber> errorDescriber,
            ObjectProvider<RecurringJob> recurringJobs) {
        return new WorkerRuntimeLifecycle(() -> {
            WorkrowProperties properties = settings.properties();
            WorkerRuntime.Builder builder = WorkerRuntime.builder(dataSource)
                    .store(store)
                    .codec(codec)
                    .pollInterval(properties.getPollInterval())
                    .heartbeatInterval(properties.getHeartbeatInterval())
                    .shutdownTimeout(properties.getShutdownTimeout())
                    .maxResultBytes(settings.maxResultBytes())
                    .listenNotify(properties.isListenNotify())
                    .metrics(metrics.getIfAvailable(() -> QueueMetrics.NOOP))
                    .observer(observer.getIfAvailable(() -> JobObserver.NOOP));
            // An ErrorDescriber bean replaces how exceptions become last_error: the redaction hook.
            errorDescriber.ifAvailable(builder::errorDescriber);
            HandlerTransactionManagers managers = new HandlerTransactionManagers(dataSource, transactionManagers);
            for (HandlerMethod handler : handlers.handlers()) {
                HandlerTransaction transaction = handler.isTransactional()
                        ? new SpringHandlerTransaction(managers.managerFor(handler), "workrow:" + handler.queue())
                        : null;
                builder.handler(new HandlerRegistration(handler.queue(), handler.payloadType(), handler,
                        settings.queueOptions(handler.queue()), transaction, handler.description()));
            }
            // On the store's connections, so the insert joins the tick's transaction; with the
            // configured max-attempts and payload cap.
            builder.producer(WorkrowAutoConfiguration.producer(store, codec, settings));
            List<RecurringJob> beans = recurringJobs.orderedStream().toList();
            for (WorkrowSettings.RecurringEntry entry : settings.recurring()) {
                beans.stream().filter(bean -> bean.name().equals(entry.name())).findFirst().ifPresent(bean -> {
                    throw new InvalidConfigurationPropertyValueException("workrow.recurring", entry.name(),
                            "a RecurringJob bean has the same name: " + bean);
                });
                builder.recurring(recurringJob(entry, handlers, codec));
            }
            beans.forEach(builder::recurring);
            settings.configuredQueues().stream()
                    .filter(queue -> handlers.handlers().stream().noneMatch(h -> h.queue().equals(queue)))
                    .forEach(queue -> log.info("workrow.queues.{} is configured but no @QueueHandler handles it"
                            + " in this application", queue));
            return builder.build();
        }, settings.properties().isAutoStartup());
    }

    /**
     * The recurring job {@code entry} configures, its payload read as the queue's handler's type;
     * fails naming the property when no handler in this application takes the queue or the payload
     * cannot be read as its type.
     */
    private static RecurringJob recurringJob(WorkrowSettings.RecurringEntry entry, QueueHandlerDiscoverer handlers,
            PayloadCodec codec) {
        HandlerMethod handler = handlers.handlers().stream().filter(h -> h.queue().equals(entry.queue())).findFirst()
                .orElseThrow(() -> new InvalidConfigurationPropertyValueException(entry.property("queue"), entry.queue(),
                        "no @QueueHandler handles this queue in this application"));
        Object payload;
        try {
            payload = codec.decode(entry.payload(), handler.payloadType());
        } catch (RuntimeException e) {
            throw new InvalidConfigurationPropertyValueException(entry.property("payload"), entry.payload(),
                    "cannot be read as " + handler.payloadType().getTypeName() + ", the payload type of "
                            + handler.description() + ": " + e.getMessage());
        }
        RecurringJob job = RecurringJob.of(entry.name(), entry.cron(), entry.queue(), payload).zone(entry.zone());
        return entry.catchUp() ? job : job.withoutCatchUp();
    }
}

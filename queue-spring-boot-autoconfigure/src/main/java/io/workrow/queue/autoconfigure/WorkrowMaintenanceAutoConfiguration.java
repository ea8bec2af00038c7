package io.workrow.queue.autoconfigure;

import io.workrow.queue.maintenance.ExhaustedJobRetirer;
import io.workrow.queue.maintenance.FairnessStatePruner;
import io.workrow.queue.maintenance.MaintenanceScheduler;
import io.workrow.queue.maintenance.PartitionKeeper;
import io.workrow.queue.maintenance.PastDeadlineCanceller;
import io.workrow.queue.maintenance.RetentionPruner;
import io.workrow.queue.maintenance.StaleLeaseSweeper;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.spring.lifecycle.MaintenanceLifecycle;
import io.workrow.queue.store.JobStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Maintenance on every worker node: the stale lease sweeper, the exhausted job retirer and the
 * past-deadline canceller every {@code workrow.sweeper.interval}, the retention pruner, the fairness state pruner and the
 * partition keeper every {@code workrow.retention.interval}.
 * Each pass skips rows other nodes hold, so all nodes can run them at once.
 */
@AutoConfiguration(after = WorkrowAutoConfiguration.class)
@ConditionalOnBean(JobStore.class)
@ConditionalOnBooleanProperty(name = "workrow.enabled", matchIfMissing = true)
public final class WorkrowMaintenanceAutoConfiguration {

    /** Rows one maintenance statement moves at most; passes loop until a batch comes back short. */
    private static final int BATCH_SIZE = 1000;

    @Bean
    @ConditionalOnMissingBean(name = "workrowMaintenance")
    MaintenanceLifecycle workrowMaintenance(JobStore store, WorkrowSettings settings,
            ObjectProvider<QueueMetrics> metrics) {
        WorkrowProperties properties = settings.properties();
        QueueMetrics reported = metrics.getIfAvailable(() -> QueueMetrics.NOOP);
        return new MaintenanceLifecycle(() -> new MaintenanceScheduler()
                .every(properties.getSweeper().getInterval(), new StaleLeaseSweeper(store, BATCH_SIZE, reported,
                        settings.configuredQueueOptions(), settings.defaultQueueOptions()))
                .every(properties.getSweeper().getInterval(), new ExhaustedJobRetirer(store, BATCH_SIZE, reported))
                .every(properties.getSweeper().getInterval(), new PastDeadlineCanceller(store, BATCH_SIZE, reported))
                .every(properties.getRetention().getInterval(),
                        new RetentionPruner(store, settings.retention(), BATCH_SIZE))
                .every(properties.getRetention().getInterval(), new FairnessStatePruner(store, BATCH_SIZE))
                .every(properties.getRetention().getInterval(), new PartitionKeeper(store)));
    }
}

package io.workrow.queue.spring.lifecycle;

import io.workrow.queue.maintenance.MaintenanceScheduler;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/** Runs Workrow's maintenance tasks while the application context runs. */
public final class MaintenanceLifecycle implements SmartLifecycle {

    private final Supplier<MaintenanceScheduler> factory;
    private volatile MaintenanceScheduler scheduler;

    public MaintenanceLifecycle(Supplier<MaintenanceScheduler> factory) {
        this.factory = factory;
    }

    @Override
    public synchronized void start() {
        if (scheduler == null) {
            scheduler = factory.get();
            scheduler.start();
        }
    }

    @Override
    public synchronized void stop() {
        if (scheduler != null) {
            scheduler.close();
            scheduler = null;
        }
    }

    @Override
    public boolean isRunning() {
        return scheduler != null;
    }
}

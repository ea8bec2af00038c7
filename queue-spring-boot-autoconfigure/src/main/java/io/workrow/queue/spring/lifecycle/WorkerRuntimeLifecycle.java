package io.workrow.queue.spring.lifecycle;

import io.workrow.queue.worker.WorkerRuntime;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the worker runtime once every singleton is ready and stops it first at shutdown,
 * synchronously, so held jobs are handed back before the {@code DataSource} closes. The runtime
 * is built at start, when every {@code @QueueHandler} has been found.
 */
public final class WorkerRuntimeLifecycle implements SmartLifecycle {

    private final Supplier<WorkerRuntime> factory;
    private volatile WorkerRuntime runtime;

    public WorkerRuntimeLifecycle(Supplier<WorkerRuntime> factory) {
        this.factory = factory;
    }

    @Override
    public synchronized void start() {
        if (runtime == null) {
            runtime = factory.get();
            runtime.start();
        }
    }

    @Override
    public synchronized void stop() {
        if (runtime != null) {
            runtime.stop();
            runtime = null;
        }
    }

    @Override
    public boolean isRunning() {
        return runtime != null;
    }

    /** The running runtime, or {@code null} when stopped. */
    public WorkerRuntime runtime() {
        return runtime;
    }

    @Override
    public int getPhase() {
        // The last phase: started after everything else (the web server included), stopped first.
        return SmartLifecycle.DEFAULT_PHASE;
    }
}

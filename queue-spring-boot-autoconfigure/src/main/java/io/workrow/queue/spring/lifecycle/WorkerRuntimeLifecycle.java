package io.workrow.queue.spring.lifecycle;

import io.workrow.queue.worker.WorkerRuntime;
import java.util.function.Supplier;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the worker runtime once every singleton is ready and stops it first at shutdown,
 * synchronously, so held jobs are handed back before the {@code DataSource} closes. The runtime
 * is built at start, when every {@code @QueueHandler} has been found. With auto-startup off
 * ({@code workrow.auto-startup=false}) nothing starts with the context: tests run jobs through
 * {@link #runtimeForDrain()}, or start the workers themselves.
 */
public final class WorkerRuntimeLifecycle implements SmartLifecycle, DisposableBean {

    private final Supplier<WorkerRuntime> factory;
    private final boolean autoStartup;
    /** Built at start or for a drain; null before and after. */
    private WorkerRuntime runtime;
    private volatile boolean running;

    public WorkerRuntimeLifecycle(Supplier<WorkerRuntime> factory) {
        this(factory, true);
    }

    public WorkerRuntimeLifecycle(Supplier<WorkerRuntime> factory, boolean autoStartup) {
        this.factory = factory;
        this.autoStartup = autoStartup;
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        if (runtime == null) {
            runtime = factory.get();
        }
        runtime.start();
        running = true;
    }

    @Override
    public synchronized void stop() {
        running = false;
        if (runtime != null) {
            runtime.stop();
            runtime = null;
        }
    }

    /** Stops a runtime built only for drains, which the context never started and so never stops. */
    @Override
    public void destroy() {
        stop();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public boolean isAutoStartup() {
        return autoStartup;
    }

    /** The running runtime, or {@code null} when stopped. */
    public WorkerRuntime runtime() {
        return running ? runtime : null;
    }

    /**
     * The runtime, built but not started, for {@link WorkerRuntime#drain(String)}; it is stopped
     * with the context.
     *
     * @throws IllegalStateException when the workers are running: their pollers would take the jobs
     */
    public synchronized WorkerRuntime runtimeForDrain() {
        if (running) {
            throw new IllegalStateException("The Workrow workers are running, so their pollers take the jobs;"
                    + " drain needs workrow.auto-startup=false");
        }
        if (runtime == null) {
            runtime = factory.get();
        }
        return runtime;
    }

    @Override
    public int getPhase() {
        // The last phase: started after everything else (the web server included), stopped first.
        return SmartLifecycle.DEFAULT_PHASE;
    }
}

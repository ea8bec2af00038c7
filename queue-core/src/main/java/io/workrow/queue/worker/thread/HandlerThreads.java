package io.workrow.queue.worker.thread;

import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads for handlers: a virtual thread per job when the JVM has them (21+), otherwise a fixed
 * pool of platform threads. Either way the poller's slots bound how many run at once. Workrow is
 * built for Java 17, so virtual threads are reached by reflection.
 */
public final class HandlerThreads {

    private static final Method OF_VIRTUAL = method(Thread.class, "ofVirtual");

    private HandlerThreads() {
    }

    /** Whether handlers run on virtual threads in this JVM. */
    public static boolean virtual() {
        return OF_VIRTUAL != null;
    }

    public static ExecutorService forQueue(String queue, int concurrency) {
        String prefix = "workrow-" + queue + "-";
        if (OF_VIRTUAL != null) {
            try {
                Object builder = OF_VIRTUAL.invoke(null);
                Class<?> builderType = Class.forName("java.lang.Thread$Builder");
                builder = builderType.getMethod("name", String.class, long.class).invoke(builder, prefix, 1L);
                ThreadFactory factory = (ThreadFactory) builderType.getMethod("factory").invoke(builder);
                return (ExecutorService) Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class)
                        .invoke(null, factory);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("Could not create virtual threads for queue " + queue, e);
            }
        }
        AtomicInteger count = new AtomicInteger();
        return Executors.newFixedThreadPool(concurrency, runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    private static Method method(Class<?> type, String name) {
        try {
            return type.getMethod(name);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}

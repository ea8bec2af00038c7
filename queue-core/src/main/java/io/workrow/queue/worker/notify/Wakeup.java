package io.workrow.queue.worker.notify;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A sticky wake-up signal for one waiting thread: a signal given while nobody waits is kept, so
 * the next {@link #await(Duration)} returns at once and no wake-up is lost between a check and
 * a wait.
 */
public final class Wakeup {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition signalled = lock.newCondition();
    private boolean pending;

    public void signal() {
        lock.lock();
        try {
            pending = true;
            signalled.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until signalled or {@code timeout} passes; returns whether it was signalled. */
    public boolean await(Duration timeout) {
        lock.lock();
        try {
            long nanos = timeout.toNanos();
            while (!pending && nanos > 0) {
                nanos = signalled.awaitNanos(nanos);
            }
            boolean wasSignalled = pending;
            pending = false;
            return wasSignalled;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Sleeps for {@code timeout} unless signalled; for back-off waits that a stop must cut short. */
    public void sleep(long millis) {
        await(Duration.of(millis, TimeUnit.MILLISECONDS.toChronoUnit()));
    }
}

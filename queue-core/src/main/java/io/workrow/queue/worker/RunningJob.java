package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimedPosition;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * One job this runtime holds, from claim until its outcome is recorded: the job, the thread its
 * handler runs on while it runs, the lease its renewals ask for, and why it was asked to stop.
 * Only the handler's own thread attaches and detaches; anyone may ask it to stop, which
 * interrupts the handler if it is still running (and never a thread that has moved on to other
 * work).
 */
final class RunningJob {

    /** Why a running handler was asked to stop. */
    enum Stop {
        /** A renewal found the token gone: the sweeper gave the job to another worker. */
        LEASE_LOST,
        /** An operator cancelled the job. */
        CANCELLED,
        /** The handler ran past its queue's {@code timeout}. */
        TIMED_OUT,
        /** The runtime is stopping and the shutdown timeout has passed. */
        SHUTDOWN
    }

    private final ClaimedPosition job;
    private final HandlerRegistration registration;
    private final Fence fence;
    private final AtomicReference<Stop> stop = new AtomicReference<>();
    private volatile Duration lease;
    /** When the last claim or renewal that confirmed the lease was sent: the lease runs from no earlier. */
    private volatile long leaseConfirmedNanos;
    private volatile long startedNanos;
    private volatile boolean finishing;
    private volatile boolean leaseAbandoned;
    /** Held while the handler's own lease or step write runs, so that letting the lease go waits for none. */
    private final ReentrantLock leaseWrites = new ReentrantLock();
    private Thread thread;

    /** @param claimSentNanos when the claim statement that granted the lease was sent ({@link System#nanoTime()}) */
    RunningJob(ClaimedPosition job, HandlerRegistration registration, long claimSentNanos) {
        this.job = job;
        this.fence = new Fence(job.token(), job.position());
        this.registration = registration;
        this.lease = registration.options().lease();
        this.leaseConfirmedNanos = claimSentNanos;
    }

    /** A renewal sent at {@code sentNanos} found the lease still this worker's and moved it on. */
    void leaseConfirmed(long sentNanos) {
        if (sentNanos - leaseConfirmedNanos > 0) {
            leaseConfirmedNanos = sentNanos;
        }
    }

    /**
     * Whether less than a third of the lease is left, as far as this worker knows: the database
     * set the expiry from its own time when the statement ran, which is no earlier than when this
     * worker sent it, so the lease lasts at least until then plus its length. A job waiting in line
     * that long (its renewals failing, or this JVM frozen) must not start: the sweeper may have
     * given it to another worker, or will before a renewal could keep it.
     */
    boolean leaseRunningOut() {
        return System.nanoTime() - leaseConfirmedNanos > lease.toNanos() / 3 * 2;
    }

    /** How long since the lease was last confirmed. */
    Duration sinceLeaseConfirmed() {
        return Duration.ofNanos(System.nanoTime() - leaseConfirmedNanos);
    }

    ClaimedPosition job() {
        return job;
    }

    long id() {
        return job.id();
    }

    /** The handler's timeout: the job's own ({@code JobRequest.timeout}), else its queue's; {@code null} for none. */
    Duration timeout() {
        return job.timeout() != null ? job.timeout() : registration().options().timeout();
    }

    HandlerRegistration registration() {
        return registration;
    }

    /** The run as its statements name it: its claim's token and its position in the claim. */
    Fence fence() {
        return fence;
    }

    /** The lease each renewal asks for: the queue's, or longer when the handler extended it. */
    Duration lease() {
        return lease;
    }

    void extendLeaseTo(Duration requested) {
        if (requested.compareTo(lease) > 0) {
            lease = requested;
        }
    }

    /** Called on the handler's thread before the handler runs. */
    synchronized void attach(Thread handlerThread) {
        startedNanos = System.nanoTime();
        thread = handlerThread;
        if (stop.get() != null) {
            handlerThread.interrupt();
        }
    }

    /**
     * Called on the handler's thread when the handler has returned or thrown: from here on no stop
     * request interrupts it, and an interrupt that arrived too late is cleared, so a pooled thread
     * starts its next job clean.
     */
    synchronized void detach() {
        thread = null;
        finishing = true;
        Thread.interrupted();
    }

    /** The outcome is decided without the handler having run (a job handed back, cancelled or lost in line). */
    void markFinishing() {
        finishing = true;
    }

    /** Whether a handler thread is still running this job's handler. */
    synchronized boolean handlerRunning() {
        return thread != null;
    }

    /** Whether the outcome has been decided and handed to the result writer. */
    boolean finishing() {
        return finishing;
    }

    /** How long the handler has run so far (zero before it started). */
    Duration runningFor() {
        long started = startedNanos;
        return started == 0 ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - started);
    }

    /** Asks the handler to stop for {@code reason}; the first reason wins. Returns whether it was the first. */
    boolean requestStop(Stop reason) {
        if (!stop.compareAndSet(null, reason)) {
            return false;
        }
        synchronized (this) {
            if (thread != null) {
                thread.interrupt();
            }
        }
        return true;
    }

    /**
     * No renewal may keep this run's lease any more (its handler ignored the interrupt past its
     * timeout, or outlived shutdown); returns whether this call let it go.
     */
    boolean abandonLease() {
        leaseWrites.lock();
        try {
            if (leaseAbandoned) {
                return false;
            }
            leaseAbandoned = true;
            return true;
        } finally {
            leaseWrites.unlock();
        }
    }

    /**
     * {@link #abandonLease()} unless a handler's own write is running this moment (returns false;
     * the caller tries again later): the timeout check must not wait on a statement.
     */
    boolean tryAbandonLease() {
        if (!leaseWrites.tryLock()) {
            return false;
        }
        try {
            return abandonLease();
        } finally {
            leaseWrites.unlock();
        }
    }

    /** Whether the lease was let go: neither the keeper nor the handler's own writes renew it. */
    boolean leaseAbandoned() {
        return leaseAbandoned;
    }

    /**
     * Runs a handler's own write of this run's lease or step and returns whether it matched, or
     * returns false without running it when the lease was let go: a lease let go stays let go,
     * whatever the handler still asks.
     */
    boolean unlessAbandoned(BooleanSupplier write) {
        leaseWrites.lock();
        try {
            return !leaseAbandoned && write.getAsBoolean();
        } finally {
            leaseWrites.unlock();
        }
    }

    /** Why the handler was asked to stop, or {@code null}. */
    Stop stopReason() {
        return stop.get();
    }

    /** Whether the job is no longer this worker's to finish (its lease was lost or it was cancelled). */
    boolean lost() {
        Stop reason = stop.get();
        return reason == Stop.LEASE_LOST || reason == Stop.CANCELLED;
    }

    @Override
    public String toString() {
        return "job=" + job.id() + " queue=" + job.queue() + " attempt=" + job.attempt() + "/" + job.maxAttempts();
    }
}

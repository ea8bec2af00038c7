package io.workrow.queue.worker;

import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes successful results in batches: one fenced statement completes many jobs, because every
 * commit waits for a WAL flush and one flush for a hundred jobs is far cheaper than a hundred. A
 * batch is written when it is full or its oldest job has waited {@code maxDelay}, so latency stays
 * low under light traffic. Each job keeps its own token in the statement, so a job whose lease was
 * lost is not completed, and is logged.
 */
final class JobCompleter {

    private static final Logger log = LoggerFactory.getLogger(JobCompleter.class);

    private static final long MAX_RETRY_MILLIS = 5_000;

    private final JobStore store;
    private final InFlightJobs inFlight;
    private final QueueMetrics metrics;
    private final int maxBatch;
    private final long maxDelayNanos;
    private final LinkedBlockingQueue<Entry> waiting = new LinkedBlockingQueue<>();
    private final Wakeup retryWait = new Wakeup();
    private volatile boolean running;
    private Thread thread;

    JobCompleter(JobStore store, InFlightJobs inFlight, QueueMetrics metrics, int maxBatch, Duration maxDelay) {
        this.store = store;
        this.inFlight = inFlight;
        this.metrics = metrics;
        this.maxBatch = maxBatch;
        this.maxDelayNanos = maxDelay.toNanos();
    }

    void start(String name) {
        running = true;
        thread = new Thread(this::loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Queues a job whose handler succeeded. After {@link #stop()} the job is completed at once. */
    void submit(ClaimedJob job, Duration handlerTime) {
        waiting.add(new Entry(job, handlerTime, System.nanoTime()));
        if (!running) {
            flushWaiting();
        }
    }

    /** Writes everything queued so far and stops the batching thread. */
    void stop() throws InterruptedException {
        running = false;
        retryWait.signal();
        if (thread != null) {
            thread.join();
        }
        flushWaiting();
    }

    private void loop() {
        List<Entry> batch = new ArrayList<>(maxBatch);
        while (running || !waiting.isEmpty()) {
            try {
                Entry first = waiting.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                long deadline = first.submittedNanos() + maxDelayNanos;
                while (batch.size() < maxBatch) {
                    long remaining = deadline - System.nanoTime();
                    Entry next = remaining > 0 ? waiting.poll(remaining, TimeUnit.NANOSECONDS) : waiting.poll();
                    if (next == null) {
                        break;
                    }
                    batch.add(next);
                }
                write(batch);
                batch.clear();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private synchronized void flushWaiting() {
        List<Entry> rest = new ArrayList<>();
        waiting.drainTo(rest);
        for (int from = 0; from < rest.size(); from += maxBatch) {
            write(rest.subList(from, Math.min(rest.size(), from + maxBatch)));
        }
    }

    private void write(List<Entry> batch) {
        List<HeldJob> held = new ArrayList<>(batch.size());
        for (Entry entry : batch) {
            held.add(new HeldJob(entry.job().id(), entry.job().leaseToken()));
        }
        Set<Long> completed = completeWithRetry(held);
        for (Entry entry : batch) {
            ClaimedJob job = entry.job();
            inFlight.remove(job.id());
            if (completed == null) {
                log.warn("job={} queue={} attempt={}/{} succeeded but its completion could not be written;"
                        + " it runs again after its lease expires", job.id(), job.queue(), job.attempt(),
                        job.maxAttempts());
            } else if (completed.contains(job.id())) {
                metrics.handled(job.queue(), JobOutcome.SUCCESS, entry.handlerTime());
            } else {
                metrics.handled(job.queue(), JobOutcome.LEASE_LOST, entry.handlerTime());
                log.info("job={} queue={} attempt={}/{} succeeded after this worker lost its lease;"
                        + " the result was not recorded", job.id(), job.queue(), job.attempt(), job.maxAttempts());
            }
        }
    }

    /** The completed ids, or null when the database stayed unreachable until shutdown. */
    private Set<Long> completeWithRetry(List<HeldJob> held) {
        long backoff = 50;
        while (true) {
            try {
                return store.completeMany(held);
            } catch (RuntimeException e) {
                if (!running) {
                    log.warn("Could not complete {} jobs during shutdown: {}", held.size(), e.toString());
                    return null;
                }
                log.warn("Could not complete {} jobs, retrying in {} ms: {}", held.size(), backoff, e.toString());
                retryWait.sleep(backoff);
                backoff = Math.min(backoff * 2, MAX_RETRY_MILLIS);
            }
        }
    }

    private record Entry(ClaimedJob job, Duration handlerTime, long submittedNanos) {
    }
}

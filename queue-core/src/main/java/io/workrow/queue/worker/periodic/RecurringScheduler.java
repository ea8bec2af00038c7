package io.workrow.queue.worker.periodic;

import io.workrow.queue.worker.thread.BackgroundThread;
import io.workrow.queue.JobRequest;
import io.workrow.queue.RecurringJob;
import io.workrow.queue.JobQueue;
import io.workrow.queue.store.RecurringStore;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Enqueues the recurring jobs' ticks. Every node runs it for the entries it declares; there is no
 * leader. At each tick a node moves the entry's last tick forward in {@code workrow_recurring}
 * and, only if it was the one to move it, enqueues the tick's job in the same transaction, with
 * the tick as {@code run_at} and in its idempotency key: one job per tick however many nodes try.
 *
 * <p>At start each entry is declared (its schedule written, its last tick read). Ticks missed
 * while no node ran are not replayed: only the last of them is enqueued, and none when the entry
 * has catch-up off or its schedule changed (the old schedule's ticks are not the new one's). A
 * thread that wakes late (a pause, a database outage) likewise enqueues only the latest tick due,
whatever the catch-up setting: the entry was running, not down. When a tick is due is decided by
 * the database's clock, read at each pass, as everything else in Workrow is: a node whose own
 * clock is off neither enqueues early nor takes a tick from the others.
 */
public final class RecurringScheduler {

    private static final Logger log = LoggerFactory.getLogger(RecurringScheduler.class);

    private static final long RETRY_MILLIS = 1_000;
    /** The longest sleep between passes, so a clock that jumps is noticed within it. */
    private static final long MOST_SLEEP_MILLIS = 60_000;
    /** Missed ticks walked at most to find the last; beyond that the entry starts afresh. */
    private static final int MOST_TICKS_WALKED = 1_000_000;

    private final List<RecurringJob> jobs;
    private final RecurringStore store;
    private final JobQueue producer;
    private final TransactionTemplate transaction;
    /** The database's clock; the local monotonic clock only times the sleeps between passes. */
    private final Supplier<Instant> clock;
    /** Each declared entry's next tick (null when its expression has no more); absent until declared. */
    private final Map<String, Instant> nextTicks = new HashMap<>();
    private final ScheduledExecutorService thread = BackgroundThread.named("workrow-recurring");

    public RecurringScheduler(List<RecurringJob> jobs, RecurringStore store, JobQueue producer,
            TransactionTemplate transaction, Supplier<Instant> clock) {
        this.jobs = List.copyOf(jobs);
        this.store = store;
        this.producer = producer;
        this.transaction = transaction;
        this.clock = clock;
    }

    public void start() {
        thread.execute(this::runSafely);
    }

    public void stop() {
        BackgroundThread.stop(thread);
    }

    private void runSafely() {
        long sleepMillis;
        try {
            sleepMillis = runDue();
        } catch (RuntimeException | Error e) {
            // Nothing may end the chain of passes: the entries would silently stop.
            log.error("Recurring jobs pass failed; trying again in {} ms", RETRY_MILLIS, e);
            sleepMillis = RETRY_MILLIS;
        }
        try {
            thread.schedule(this::runSafely, sleepMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            // stop() was called: no more passes.
        }
    }

    /**
     * Declares the entries not declared yet and enqueues every tick due; returns the millis until
     * the next. An entry whose statements fail is tried again a second later; the others go on.
     */
    long runDue() {
        Instant now = clock.get();
        long readNanos = System.nanoTime();
        boolean failed = false;
        for (RecurringJob job : jobs) {
            try {
                if (!nextTicks.containsKey(job.name())) {
                    nextTicks.put(job.name(), declare(job, now));
                }
                Instant next = nextTicks.get(job.name());
                if (next != null && !next.isAfter(now)) {
                    Instant following = job.nextTick(now);
                    Instant due = latestTick(job, next, now);
                    if (due != null) {
                        enqueue(job, due, following);
                    }
                    nextTicks.put(job.name(), following);
                }
            } catch (RuntimeException e) {
                log.warn("{}: could not declare it or enqueue its tick; trying again in {} ms: {}", job, RETRY_MILLIS,
                        e.toString());
                failed = true;
            }
        }
        Instant nowAgain = now.plusNanos(System.nanoTime() - readNanos);
        long sleepMillis = nextTicks.values().stream().filter(tick -> tick != null).min(Instant::compareTo)
                .map(earliest -> Duration.between(nowAgain, earliest).toMillis()).orElse(MOST_SLEEP_MILLIS);
        return Math.max(0, Math.min(failed ? RETRY_MILLIS : MOST_SLEEP_MILLIS, sleepMillis));
    }

    /** Writes the entry's schedule, catches up its last missed tick if it has one; returns its next tick. */
    private Instant declare(RecurringJob job, Instant now) {
        Instant following = job.nextTick(now);
        Instant lastTick = store.declare(job.name(), job.queue(), job.cron(), job.zone().getId(), following, now);
        Instant missed = lastTick == null ? null : latestTick(job, job.nextTick(lastTick), now);
        if (missed == null) {
            log.info("{} declared; next tick {}", job, following);
        } else if (!job.catchUp()) {
            log.info("{} missed ticks since {} while no node ran; skipping them (catch-up off); next tick {}", job,
                    lastTick, following);
        } else {
            log.info("{} missed ticks since {} while no node ran; enqueueing only the last, {}; next tick {}", job,
                    lastTick, missed, following);
            enqueue(job, missed, following);
        }
        return following;
    }

    /**
     * The last tick from {@code first} on that is not after {@code now}; null if {@code first} is
     * later, or if more than {@link #MOST_TICKS_WALKED} ticks lie between (the entry then starts
     * afresh at its next tick rather than spend the time).
     */
    private static Instant latestTick(RecurringJob job, Instant first, Instant now) {
        if (first == null || first.isAfter(now)) {
            return null;
        }
        Instant latest = first;
        for (int walked = 0; walked < MOST_TICKS_WALKED; walked++) {
            Instant next = job.nextTick(latest);
            if (next == null || next.isAfter(now)) {
                return latest;
            }
            latest = next;
        }
        log.info("{}: more than {} ticks missed; starting afresh at the next", job, MOST_TICKS_WALKED);
        return null;
    }

    /** Enqueues {@code tick}'s job if this node is the one to move the entry's last tick to it. */
    private void enqueue(RecurringJob job, Instant tick, Instant following) {
        Long id = transaction.execute(status -> store.advance(job.name(), tick, following)
                ? producer.enqueue(JobRequest.of(job.queue(), job.payload()).idempotencyKey(job.idempotencyKey(tick))
                        .runAt(tick))
                : null);
        if (id != null) {
            log.info("{}: job={} enqueued for the tick {}", job, id, tick);
        }
    }
}

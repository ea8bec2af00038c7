package io.workrow.queue;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import java.util.Optional;
import org.springframework.scheduling.support.CronExpression;

/**
 * A job enqueued on every tick of a cron expression (Spring's syntax, seconds first), exactly once
 * per tick however many nodes run it: declared as {@code workrow.recurring.<name>} or as a bean.
 * The job's {@code run_at} is the tick and its idempotency key holds the tick
 * ({@link #idempotencyKey(Instant)}), so every node may enqueue each tick and only one insert
 * wins. After downtime only the last missed tick runs, or none ({@link #withoutCatchUp()}).
 *
 * <pre>{@code
 * @Bean
 * RecurringJob nightlyReport() {
 *     return RecurringJob.of("nightly-report", "0 0 2 * * *", "reports", new Report("nightly"))
 *             .zone(ZoneId.of("Europe/Berlin"));
 * }
 * }</pre>
 */
public final class RecurringJob {

    private final String name;
    private final CronExpression cron;
    private final String cronText;
    private final ZoneId zone;
    private final String queue;
    private final Object payload;
    private final boolean catchUp;

    private RecurringJob(String name, String cron, ZoneId zone, String queue, Object payload, boolean catchUp) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("A recurring job needs a name");
        }
        if (queue == null || queue.isBlank()) {
            throw new IllegalArgumentException("Recurring job " + name + " needs a queue");
        }
        this.name = name;
        this.cronText = Objects.requireNonNull(cron, "cron");
        this.cron = CronExpression.parse(cron);
        this.zone = Objects.requireNonNull(zone, "zone");
        this.queue = queue;
        this.payload = Objects.requireNonNull(payload, "payload");
        this.catchUp = catchUp;
    }

    /**
     * A recurring job on {@code cron} in UTC whose jobs carry {@code payload} to {@code queue}'s handler.
     *
     * @throws IllegalArgumentException if {@code cron} is not a valid cron expression
     */
    public static RecurringJob of(String name, String cron, String queue, Object payload) {
        return new RecurringJob(name, cron, ZoneId.of("UTC"), queue, payload, true);
    }

    /** The same job with its ticks computed in {@code zone} (daylight saving included). */
    public RecurringJob zone(ZoneId zone) {
        return new RecurringJob(name, cronText, zone, queue, payload, catchUp);
    }

    /** The same job, whose ticks missed while no node ran are skipped, not even the last one run. */
    public RecurringJob withoutCatchUp() {
        return new RecurringJob(name, cronText, zone, queue, payload, false);
    }

    public String name() {
        return name;
    }

    public String cron() {
        return cronText;
    }

    public ZoneId zone() {
        return zone;
    }

    public String queue() {
        return queue;
    }

    public Object payload() {
        return payload;
    }

    /** Whether the last tick missed while no node ran is enqueued at the next start. */
    public boolean catchUp() {
        return catchUp;
    }

    /** The first tick strictly after {@code instant}, or null if the expression has no more. */
    public Instant nextTick(Instant instant) {
        ZonedDateTime next = cron.next(ZonedDateTime.ofInstant(instant, zone));
        return next == null ? null : next.toInstant();
    }

    /** The idempotency key of the job for {@code tick}: the same on every node. */
    public String idempotencyKey(Instant tick) {
        return keyPrefix(name) + tick;
    }

    /**
     * The tick a job of the recurring job {@code name} was enqueued for, read from its idempotency
     * key; empty for a job that is not one of its ticks. A handler that works on the period before
     * its tick takes the tick from here: the job's run time moves when an attempt fails.
     */
    public static Optional<Instant> tickOf(String name, JobContext job) {
        String key = job.idempotencyKey();
        String prefix = keyPrefix(name);
        if (key == null || !key.startsWith(prefix)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.parse(key.substring(prefix.length())));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static String keyPrefix(String name) {
        return "workrow:recurring:" + name + ":";
    }

    @Override
    public String toString() {
        return "recurring job " + name + " (" + cronText + " " + zone + " -> " + queue + ")";
    }
}

package io.workrow.queue.autoconfigure;

import io.workrow.queue.JobStatus;
import io.workrow.queue.client.QueueNames;
import io.workrow.queue.store.NotifyChannel;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.worker.BreakerOptions;
import io.workrow.queue.worker.FairnessMode;
import io.workrow.queue.worker.FairnessOptions;
import io.workrow.queue.worker.KeyOrdering;
import io.workrow.queue.worker.QueueOptions;
import io.workrow.queue.worker.RetryBackoff;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.scheduling.support.CronExpression;

/**
 * {@link WorkrowProperties} checked and resolved: every value validated with the full property
 * name in the error, per-queue settings merged over the defaults. Built once at start-up, so a
 * bad value stops the application before any job runs.
 */
public final class WorkrowSettings {

    private static final Pattern DASHBOARD_PATH = Pattern.compile("(/(?!\\.{1,2}(?:/|$))[A-Za-z0-9_.-]+)+");

    private final WorkrowProperties properties;
    private final SqlIdentifier schema;
    private final QueueSettings defaults;
    private final Map<String, QueueSettings> queues = new LinkedHashMap<>();
    private final List<RecurringEntry> recurring = new ArrayList<>();

    /**
     * A recurring job as configured under {@code workrow.recurring.<name>}, its cron expression and
     * zone checked; the payload is read when the queue's handler (and so its type) is known.
     */
    public record RecurringEntry(String name, String cron, ZoneId zone, String queue, String payload,
            boolean catchUp) {

        /** The entry's property prefix, for errors that name a property. */
        public String property(String key) {
            return "workrow.recurring." + name + "." + key;
        }
    }

    private WorkrowSettings(WorkrowProperties properties) {
        this.properties = properties;
        this.schema = properties.getSchema() == null ? null : schema(properties.getSchema());
        positive("workrow.poll-interval", properties.getPollInterval());
        positive("workrow.heartbeat-interval", properties.getHeartbeatInterval());
        positive("workrow.lease", properties.getLease());
        notNegative("workrow.shutdown-timeout", properties.getShutdownTimeout());
        byteSize("workrow.max-payload-size", properties.getMaxPayloadSize());
        byteSize("workrow.max-result-size", properties.getMaxResultSize());
        positive("workrow.sweeper.interval", properties.getSweeper().getInterval());
        positive("workrow.statement-timeout", properties.getStatementTimeout());
        if (properties.getStatementTimeout().toMillis() < 1000) {
            throw new InvalidConfigurationPropertyValueException("workrow.statement-timeout",
                    properties.getStatementTimeout(), "must be at least 1s (a JDBC query timeout counts whole seconds)");
        }
        WorkrowProperties.Retention retention = properties.getRetention();
        positive("workrow.retention.completed", retention.getCompleted());
        positive("workrow.retention.dead", retention.getDead());
        positive("workrow.retention.cancelled", retention.getCancelled());
        positive("workrow.retention.interval", retention.getInterval());
        positive("workrow.health.max-lag", properties.getHealth().getMaxLag());
        positive("workrow.health.listener-timeout", properties.getHealth().getListenerTimeout());
        positive("workrow.metrics.refresh-interval", properties.getMetrics().getRefreshInterval());
        dashboardPath(properties.getDashboard().getPath());
        if (properties.getDashboard().getRefreshInterval() == null
                || properties.getDashboard().getRefreshInterval().toMillis() < 1000) {
            throw new InvalidConfigurationPropertyValueException("workrow.dashboard.refresh-interval",
                    properties.getDashboard().getRefreshInterval(), "must be at least 1s");
        }

        WorkrowProperties.QueueDefaults given = properties.getDefaults();
        WorkrowProperties.Backoff backoff = given.getBackoff();
        this.defaults = new QueueSettings("workrow.defaults", given.getConcurrency(), given.getBatchSize(),
                given.getMaxAttempts(), properties.getLease(), backoff.getInitial(), backoff.getMultiplier(),
                backoff.getMax(), backoff.getJitter(), given.getTimeout(), given.getMaxLeaseExpiries(), null,
                KeyOrdering.NONE, FairnessOptions.NONE, given.getPrefetch(), given.getMaxSnoozes(), null, null);
        properties.getQueues().forEach((name, queue) -> {
            try {
                QueueNames.check(name);
            } catch (IllegalArgumentException e) {
                throw new InvalidConfigurationPropertyValueException("workrow.queues", name, e.getMessage());
            }
            queues.put(name, defaults.overriddenBy("workrow.queues." + name, queue));
            if (queue.getMaxLag() != null) {
                positive("workrow.queues." + name + ".max-lag", queue.getMaxLag());
            }
        });
        properties.getRecurring().forEach((name, entry) -> recurring.add(recurringEntry(name, entry)));
    }

    private static RecurringEntry recurringEntry(String name, WorkrowProperties.Recurring entry) {
        String prefix = "workrow.recurring." + name;
        if (entry.getCron() == null || entry.getCron().isBlank()) {
            throw new InvalidConfigurationPropertyValueException(prefix + ".cron", entry.getCron(),
                    "must be set: Spring's cron syntax, seconds first, such as \"0 0 2 * * *\"");
        }
        try {
            CronExpression.parse(entry.getCron());
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException(prefix + ".cron", entry.getCron(), e.getMessage());
        }
        ZoneId zone;
        try {
            zone = ZoneId.of(entry.getZone());
        } catch (DateTimeException | NullPointerException e) {
            throw new InvalidConfigurationPropertyValueException(prefix + ".zone", entry.getZone(),
                    "is not a time zone (such as UTC or Europe/Berlin): " + e.getMessage());
        }
        if (entry.getQueue() == null || entry.getQueue().isBlank()) {
            throw new InvalidConfigurationPropertyValueException(prefix + ".queue", entry.getQueue(), "must be set");
        }
        try {
            QueueNames.check(entry.getQueue());
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException(prefix + ".queue", entry.getQueue(), e.getMessage());
        }
        return new RecurringEntry(name, entry.getCron(), zone, entry.getQueue(), entry.getPayload(), entry.isCatchUp());
    }

    /** The recurring jobs configured under {@code workrow.recurring}, checked. */
    public List<RecurringEntry> recurring() {
        return List.copyOf(recurring);
    }

    /** Checks {@code properties}; throws {@link InvalidConfigurationPropertyValueException} naming the first bad one. */
    public static WorkrowSettings of(WorkrowProperties properties) {
        return new WorkrowSettings(properties);
    }

    public WorkrowProperties properties() {
        return properties;
    }

    /** The configured schema, or {@code null} for the connection's current schema. */
    public SqlIdentifier schema() {
        return schema;
    }

    /** How {@code queue} is worked: its own settings over the defaults. */
    public QueueOptions queueOptions(String queue) {
        return queues.getOrDefault(queue, defaults).options();
    }

    /** The attempts a job of {@code queue} gets when the request sets none. */
    public int maxAttempts(String queue) {
        return queues.getOrDefault(queue, defaults).maxAttempts();
    }

    /** The options of each queue with settings of its own. */
    public Map<String, QueueOptions> configuredQueueOptions() {
        Map<String, QueueOptions> options = new LinkedHashMap<>();
        queues.forEach((name, queue) -> options.put(name, queue.options()));
        return options;
    }

    /** The options of queues without settings of their own. */
    public QueueOptions defaultQueueOptions() {
        return defaults.options();
    }

    /** The lag above which {@code queue} makes the workrowLag indicator DOWN. */
    public Duration maxLag(String queue) {
        WorkrowProperties.Queue own = properties.getQueues().get(queue);
        return own != null && own.getMaxLag() != null ? own.getMaxLag() : properties.getHealth().getMaxLag();
    }

    /** Names of the queues with settings of their own. */
    public java.util.Set<String> configuredQueues() {
        return queues.keySet();
    }

    public int maxPayloadBytes() {
        return (int) properties.getMaxPayloadSize().toBytes();
    }

    public int maxResultBytes() {
        return (int) properties.getMaxResultSize().toBytes();
    }

    /** Retention by finished status. */
    public Map<JobStatus, Duration> retention() {
        Map<JobStatus, Duration> retention = new EnumMap<>(JobStatus.class);
        retention.put(JobStatus.COMPLETED, properties.getRetention().getCompleted());
        retention.put(JobStatus.DEAD, properties.getRetention().getDead());
        retention.put(JobStatus.CANCELLED, properties.getRetention().getCancelled());
        return retention;
    }

    static SqlIdentifier schema(String value) {
        SqlIdentifier schema;
        try {
            schema = SqlIdentifier.of("workrow.schema", value);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException("workrow.schema", value,
                    "must be a plain lowercase SQL identifier (letters, digits, '_'; at most 63 bytes)");
        }
        try {
            NotifyChannel.of(schema);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException("workrow.schema", value, e.getMessage());
        }
        return schema;
    }

    /**
     * The dashboard's path goes into a request mapping and into the page's links, so it is held to
     * a plain form: no placeholders, patterns, query or trailing slash.
     */
    private static void dashboardPath(String path) {
        if (path == null || !DASHBOARD_PATH.matcher(path).matches()) {
            throw new InvalidConfigurationPropertyValueException("workrow.dashboard.path", path,
                    "must be a slash followed by letters, digits, '-', '_', '.' and inner slashes, such as /workrow or /ops/queues");
        }
    }

    private static void byteSize(String name, org.springframework.util.unit.DataSize value) {
        if (value == null || value.toBytes() < 1 || value.toBytes() > Integer.MAX_VALUE) {
            throw new InvalidConfigurationPropertyValueException(name, value, "must be between 1B and 2GB");
        }
    }

    private static void positive(String name, Duration value) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new InvalidConfigurationPropertyValueException(name, value, "must be a positive duration");
        }
    }

    private static void notNegative(String name, Duration value) {
        if (value == null || value.isNegative()) {
            throw new InvalidConfigurationPropertyValueException(name, value, "must not be negative");
        }
    }

    private static void atLeast(String name, int min, Integer value) {
        if (value == null || value < min) {
            throw new InvalidConfigurationPropertyValueException(name, value, "must be at least " + min);
        }
    }

    /** One queue's resolved settings; {@code prefix} names them in errors. */
    private record QueueSettings(String prefix, int concurrency, int batchSize, int maxAttempts, Duration lease,
            Duration initial, double multiplier, Duration max, double jitter, Duration timeout,
            Integer maxLeaseExpiries, BreakerOptions breaker, KeyOrdering ordering, FairnessOptions fairness,
            Integer prefetch, int maxSnoozes, Integer globalConcurrency, Integer keyConcurrency) {

        QueueSettings {
            atLeast(prefix + ".concurrency", 1, concurrency);
            atLeast(prefix + ".batch-size", 1, batchSize);
            if (prefetch != null && prefetch < 0) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".prefetch", prefetch,
                        "must be at least 0 (leave it unset for a prefetch sized from the handlers' throughput)");
            }
            atLeast(prefix + ".max-attempts", 1, maxAttempts);
            atLeast(prefix + ".max-snoozes", 0, maxSnoozes);
            if (keyConcurrency != null) {
                atLeast(prefix + ".key-concurrency", 1, keyConcurrency);
                if (ordering != KeyOrdering.NONE || fairness.fair()) {
                    throw new InvalidConfigurationPropertyValueException(prefix + ".key-concurrency", keyConcurrency,
                            "not available with " + prefix + (ordering != KeyOrdering.NONE ? ".ordered: an ordered"
                                    + " queue runs one job per key already" : ".fairness: a fair queue shares its starts"
                                    + " among keys"));
                }
                if (prefetch != null && prefetch > 0) {
                    throw new InvalidConfigurationPropertyValueException(prefix + ".prefetch", prefetch,
                            "not available with " + prefix + ".key-concurrency: jobs claimed ahead would hold their"
                                    + " keys' slots while they wait");
                }
            }
            if (globalConcurrency != null) {
                atLeast(prefix + ".global-concurrency", 1, globalConcurrency);
            }
            String leaseKey = prefix.equals("workrow.defaults") ? "workrow.lease" : prefix + ".lease";
            positive(leaseKey, lease);
            if (lease.compareTo(QueueOptions.MIN_LEASE) < 0) {
                throw new InvalidConfigurationPropertyValueException(leaseKey, lease, "must be at least "
                        + QueueOptions.MIN_LEASE.toSeconds() + "s (renewals run every third of it)");
            }
            if (timeout != null) {
                positive(prefix + ".timeout", timeout);
            }
            positive(prefix + ".backoff.initial", initial);
            positive(prefix + ".backoff.max", max);
            if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".backoff.multiplier", multiplier,
                        "must be at least 1.0");
            }
            if (!(jitter >= 0.0 && jitter <= 1.0)) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".backoff.jitter", jitter,
                        "must be between 0.0 and 1.0");
            }
            if (max.compareTo(initial) < 0) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".backoff.max", max,
                        "must not be below " + prefix + ".backoff.initial (" + initial + ")");
            }
            if (maxLeaseExpiries != null) {
                atLeast(prefix + ".max-lease-expiries", 1, maxLeaseExpiries);
            }
            if (prefetch != null && prefetch > 0 && breaker != null) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".prefetch", prefetch,
                        "not available with a circuit breaker: jobs claimed ahead would still start while it is open");
            }
            if (prefetch != null && prefetch > 0 && fairness.fair() && fairness.mode() != FairnessMode.WEIGHTED) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".prefetch", prefetch,
                        "not available with fairness." + fairness.mode().name().toLowerCase(Locale.ROOT)
                                + ": its rate counts claims, and jobs waiting in line would start together");
            }
        }

        QueueSettings overriddenBy(String queuePrefix, WorkrowProperties.Queue queue) {
            WorkrowProperties.QueueBackoff backoff = queue.getBackoff();
            return new QueueSettings(queuePrefix,
                    or(queue.getConcurrency(), concurrency), or(queue.getBatchSize(), batchSize),
                    or(queue.getMaxAttempts(), maxAttempts), or(queue.getLease(), lease),
                    or(backoff.getInitial(), initial), or(backoff.getMultiplier(), multiplier),
                    or(backoff.getMax(), max), or(backoff.getJitter(), jitter), or(queue.getTimeout(), timeout),
                    or(queue.getMaxLeaseExpiries(), maxLeaseExpiries), breaker(queuePrefix + ".breaker", queue.getBreaker()),
                    ordering(queue), fairness(queuePrefix, queue), or(queue.getPrefetch(), prefetch),
                    or(queue.getMaxSnoozes(), maxSnoozes), queue.getGlobalConcurrency(), queue.getKeyConcurrency());
        }

        private static FairnessOptions fairness(String queuePrefix, WorkrowProperties.Queue queue) {
            WorkrowProperties.Fairness fairness = queue.getFairness();
            if (fairness == null || fairness.getMode() == null || fairness.getMode() == FairnessMode.NONE) {
                return FairnessOptions.NONE;
            }
            String prefix = queuePrefix + ".fairness";
            if (queue.isOrdered()) {
                throw new InvalidConfigurationPropertyValueException(prefix + ".mode",
                        fairness.getMode().name().toLowerCase(Locale.ROOT),
                        "a queue is either ordered or fair: remove " + queuePrefix + ".ordered or this mode");
            }
            atLeast(prefix + ".rate-per-minute", 1, fairness.getRatePerMinute());
            return new FairnessOptions(fairness.getMode(), fairness.getRatePerMinute());
        }

        private static KeyOrdering ordering(WorkrowProperties.Queue queue) {
            if (!queue.isOrdered()) {
                return KeyOrdering.NONE;
            }
            return queue.getKeyFailure() == WorkrowProperties.KeyFailure.SKIP ? KeyOrdering.SKIP : KeyOrdering.BLOCK;
        }

        private static BreakerOptions breaker(String prefix, WorkrowProperties.Breaker breaker) {
            if (breaker == null || !breaker.isEnabled()) {
                return null;
            }
            atLeast(prefix + ".failure-threshold", 1, breaker.getFailureThreshold());
            positive(prefix + ".cooldown", breaker.getCooldown());
            atLeast(prefix + ".half-open-probes", 1, breaker.getHalfOpenProbes());
            return new BreakerOptions(breaker.getFailureThreshold(), breaker.getCooldown(), breaker.getHalfOpenProbes());
        }

        QueueOptions options() {
            return new QueueOptions(concurrency, batchSize, lease, new RetryBackoff(initial, multiplier, max, jitter),
                    timeout, maxLeaseExpiries == null ? 0 : maxLeaseExpiries, breaker, ordering, fairness,
                    prefetch == null ? QueueOptions.ADAPTIVE_PREFETCH : prefetch, maxAttempts, maxSnoozes,
                    globalConcurrency == null ? 0 : globalConcurrency, keyConcurrency == null ? 0 : keyConcurrency);
        }

        private static <T> T or(T value, T fallback) {
            return value != null ? value : fallback;
        }
    }
}

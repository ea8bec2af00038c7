package io.workrow.queue.autoconfigure;

import io.workrow.queue.worker.FairnessMode;
import io.workrow.queue.worker.FairnessOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of Workrow, under {@code workrow}. Per-queue settings under
 * {@code workrow.queues.<queue>} override the defaults under {@code workrow.defaults}.
 * The defaults here equal the engine's own (checked by a test), so plain-Java and Spring users
 * get the same behaviour.
 */
@ConfigurationProperties("workrow")
public class WorkrowProperties {

    /** Whether to run workers and maintenance in this application. The producer (JobQueue) works regardless. */
    private boolean enabled = true;

    /** Whether the workers start with the application context. Off in tests that run jobs one queue at a time with WorkerRuntime.drain, as the workrow test kit does by default. */
    private boolean autoStartup = true;

    /** Schema holding Workrow's tables: a plain lowercase SQL identifier. Defaults to the connection's current schema. */
    private String schema;

    /** Whether to wake idle workers with LISTEN/NOTIFY. Turn off behind PgBouncer in transaction pooling mode. */
    private boolean listenNotify = true;

    /** How often an idle queue looks for due jobs without a notification; also how soon scheduled jobs are seen. */
    private Duration pollInterval = Duration.ofSeconds(1);

    /** How long a claim holds a job without renewal, unless a queue sets its own. The runtime renews it every third of it while the handler runs, so it bounds how soon a crashed or frozen worker's jobs run elsewhere, not how long a handler may take. At least 1s. */
    private Duration lease = Duration.ofMinutes(5);

    /** Time running handlers get to finish at shutdown; then they are interrupted and get as long again to stop. A job goes back to pending only once its handler has stopped. */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /** How often a worker with ordered queues records that it is alive; a worker silent for three intervals counts as dead and its partition buckets move to the live ones. */
    private Duration heartbeatInterval = Duration.ofSeconds(5);

    /** Largest payload accepted by enqueue, as JSON. */
    private DataSize maxPayloadSize = DataSize.ofMegabytes(1);

    /** Largest result a handler may return, as JSON (JobFunction, or a @QueueHandler method that returns a value); a larger one sends its job to dead with the reason, since the same run would return it again. */
    private DataSize maxResultSize = DataSize.ofKilobytes(64);

    /** Longest any statement of Workrow's own threads (claims, results, lease renewals, maintenance) may run, lock waits included; whole seconds. */
    private Duration statementTimeout = Duration.ofSeconds(10);

    private final Migrations migrations = new Migrations();

    private final Sweeper sweeper = new Sweeper();

    private final Retention retention = new Retention();

    private final QueueDefaults defaults = new QueueDefaults();

    private final Health health = new Health();

    private final Metrics metrics = new Metrics();

    private final Dashboard dashboard = new Dashboard();

    /** Per-queue settings, by queue name; each key overrides the same key under workrow.defaults. */
    private Map<String, Queue> queues = new LinkedHashMap<>();

    /**
     * Recurring jobs, by name: a job enqueued on each tick of a cron expression, once per tick
     * however many nodes run; enqueued by the nodes where workrow.enabled is true.
     */
    private Map<String, Recurring> recurring = new LinkedHashMap<>();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isAutoStartup() {
        return autoStartup;
    }

    public void setAutoStartup(boolean autoStartup) {
        this.autoStartup = autoStartup;
    }

    public String getSchema() {
        return schema;
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }

    public boolean isListenNotify() {
        return listenNotify;
    }

    public void setListenNotify(boolean listenNotify) {
        this.listenNotify = listenNotify;
    }

    public Duration getPollInterval() {
        return pollInterval;
    }

    public void setPollInterval(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    public Duration getLease() {
        return lease;
    }

    public void setLease(Duration lease) {
        this.lease = lease;
    }

    public Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    public void setShutdownTimeout(Duration shutdownTimeout) {
        this.shutdownTimeout = shutdownTimeout;
    }

    public Duration getStatementTimeout() {
        return statementTimeout;
    }

    public void setStatementTimeout(Duration statementTimeout) {
        this.statementTimeout = statementTimeout;
    }

    public Duration getHeartbeatInterval() {
        return heartbeatInterval;
    }

    public void setHeartbeatInterval(Duration heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    public DataSize getMaxPayloadSize() {
        return maxPayloadSize;
    }

    public void setMaxPayloadSize(DataSize maxPayloadSize) {
        this.maxPayloadSize = maxPayloadSize;
    }

    public DataSize getMaxResultSize() {
        return maxResultSize;
    }

    public void setMaxResultSize(DataSize maxResultSize) {
        this.maxResultSize = maxResultSize;
    }

    public Migrations getMigrations() {
        return migrations;
    }

    public Sweeper getSweeper() {
        return sweeper;
    }

    public Retention getRetention() {
        return retention;
    }

    public QueueDefaults getDefaults() {
        return defaults;
    }

    public Health getHealth() {
        return health;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Dashboard getDashboard() {
        return dashboard;
    }

    public Map<String, Queue> getQueues() {
        return queues;
    }

    public void setQueues(Map<String, Queue> queues) {
        this.queues = queues;
    }

    public Map<String, Recurring> getRecurring() {
        return recurring;
    }

    public void setRecurring(Map<String, Recurring> recurring) {
        this.recurring = recurring;
    }

    /** Workrow's own schema migrations. */
    public static class Migrations {

        /** Whether to create and upgrade Workrow's tables at start-up. Turn off when a DBA applies the SQL. */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * Recovery of jobs whose lease expired, retirement of jobs with no attempts left, and
     * cancellation of jobs nobody started by their deadline.
     */
    public static class Sweeper {

        /**
         * How often to return jobs with expired leases to pending, retire exhausted ones and cancel
         * those nobody started by their deadline.
         */
        private Duration interval = Duration.ofSeconds(30);

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /**
     * How long finished jobs are kept. Completed and cancelled jobs, with every attempt's outcome,
     * go a whole day at a time once the longer of their two retentions has passed since the day
     * ended (UTC); dead jobs are deleted one by one.
     */
    public static class Retention {

        /** How long to keep completed jobs (whole days: the outcome log drops a day at a time). */
        private Duration completed = Duration.ofDays(7);

        /** How long to keep dead jobs, the case files of what failed. */
        private Duration dead = Duration.ofDays(30);

        /** How long to keep cancelled jobs (whole days, as completed jobs). */
        private Duration cancelled = Duration.ofDays(7);

        /** How often to drop finished jobs past their retention. */
        private Duration interval = Duration.ofMinutes(10);

        public Duration getCompleted() {
            return completed;
        }

        public void setCompleted(Duration completed) {
            this.completed = completed;
        }

        public Duration getDead() {
            return dead;
        }

        public void setDead(Duration dead) {
            this.dead = dead;
        }

        public Duration getCancelled() {
            return cancelled;
        }

        public void setCancelled(Duration cancelled) {
            this.cancelled = cancelled;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /** The workrow health indicator. */
    public static class Health {

        /** Whether the workrowLag health indicator reports queues whose lag exceeds their max-lag as DOWN. Off by default: lag is a fact about the whole cluster, not about this node, so put it in a health group of its own. */
        private boolean lagEnabled = false;

        /** Lag (age of the oldest due pending job) above which a queue makes the workrowLag indicator DOWN, unless the queue sets its own max-lag. */
        private Duration maxLag = Duration.ofMinutes(5);

        /** How long the insert listener may be disconnected before the workrow health details call wake-ups degraded (jobs still run by polling; health stays UP). */
        private Duration listenerTimeout = Duration.ofMinutes(1);

        public boolean isLagEnabled() {
            return lagEnabled;
        }

        public void setLagEnabled(boolean lagEnabled) {
            this.lagEnabled = lagEnabled;
        }

        public Duration getMaxLag() {
            return maxLag;
        }

        public void setMaxLag(Duration maxLag) {
            this.maxLag = maxLag;
        }

        public Duration getListenerTimeout() {
            return listenerTimeout;
        }

        public void setListenerTimeout(Duration listenerTimeout) {
            this.listenerTimeout = listenerTimeout;
        }
    }

    /** Workrow's meters. */
    public static class Metrics {

        /** How often the queue depth and lag gauges are refreshed, by one query for all queues. */
        private Duration refreshInterval = Duration.ofSeconds(15);

        public Duration getRefreshInterval() {
            return refreshInterval;
        }

        public void setRefreshInterval(Duration refreshInterval) {
            this.refreshInterval = refreshInterval;
        }
    }

    /** The dashboard page, served by the application's Spring MVC. */
    public static class Dashboard {

        /** Whether to serve the dashboard page; it shows queues, running and dead jobs to anyone who can reach its path. */
        private boolean enabled;

        /** Where the page is served, relative to the servlet's path: a slash and then letters, digits, '-', '_', '.' and further slashes. */
        private String path = "/workrow";

        /** Whether a job's payload, headers and saved step are shown; they may hold personal data. */
        private boolean showPayloads;

        /** How often the open page reads the queues again. */
        private Duration refreshInterval = Duration.ofSeconds(5);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPath() {
            return path;
        }

        public void setPath(String path) {
            this.path = path;
        }

        public boolean isShowPayloads() {
            return showPayloads;
        }

        public void setShowPayloads(boolean showPayloads) {
            this.showPayloads = showPayloads;
        }

        public Duration getRefreshInterval() {
            return refreshInterval;
        }

        public void setRefreshInterval(Duration refreshInterval) {
            this.refreshInterval = refreshInterval;
        }
    }

    /** Settings every queue gets unless it overrides them under {@code workrow.queues.<queue>}. */
    public static class QueueDefaults {

        /** Most handlers of one queue running at once in this application. */
        private int concurrency = 8;

        /** Most jobs claimed by one statement (fewer when there is less room: free handler slots plus the prefetch); with slow handlers claims stay small whatever this says. */
        private int batchSize = 2000;

        /** Most jobs claimed ahead of free handler slots, waiting in this application to start (leases renewed, handed back unstarted at shutdown); 0 claims only for free slots. Unset: adaptive, about a tenth of a second of the handlers' measured throughput, at most twice the batch size (zero with a circuit breaker or burst/spaced fairness). */
        private Integer prefetch;

        public Integer getPrefetch() {
            return prefetch;
        }

        public void setPrefetch(Integer prefetch) {
            this.prefetch = prefetch;
        }

        /** Attempts a job gets before it is dead, unless the enqueue request says otherwise. */
        private int maxAttempts = 5;

        /** Times one job may snooze (SnoozeJobException) without spending an attempt; its next snooze counts as a failed attempt. */
        private int maxSnoozes = 100;

        public int getMaxSnoozes() {
            return maxSnoozes;
        }

        public void setMaxSnoozes(int maxSnoozes) {
            this.maxSnoozes = maxSnoozes;
        }

        /** Longest a handler may run before it is interrupted and its attempt fails; unset for no limit. */
        private Duration timeout;

        /** Times a job's lease may expire (its worker crashed or froze) before the job is dead with "lease expired N times"; expiries then stop spending the job's attempts. Unset: no limit of its own, and an expiry spends an attempt like a failure. */
        private Integer maxLeaseExpiries;

        private final Backoff backoff = new Backoff();

        public Integer getMaxLeaseExpiries() {
            return maxLeaseExpiries;
        }

        public void setMaxLeaseExpiries(Integer maxLeaseExpiries) {
            this.maxLeaseExpiries = maxLeaseExpiries;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public int getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Backoff getBackoff() {
            return backoff;
        }
    }

    /** Wait before a failed job's next attempt: initial * multiplier^(attempt-1), capped, with jitter. */
    public static class Backoff {

        /** Wait after the first failed attempt. */
        private Duration initial = Duration.ofSeconds(1);

        /** Factor the wait grows by with each failed attempt; at least 1.0. */
        private double multiplier = 2.0;

        /** Longest wait between attempts. */
        private Duration max = Duration.ofHours(1);

        /** Random spread of each wait, as a fraction of it (0.2 is ±20%), between 0.0 and 1.0. */
        private double jitter = 0.2;

        public Duration getInitial() {
            return initial;
        }

        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        public double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }

        public double getJitter() {
            return jitter;
        }

        public void setJitter(double jitter) {
            this.jitter = jitter;
        }
    }

    /** One queue's overrides; an unset value falls back to workrow.defaults (and workrow.lease). */
    public static class Queue {

        /** Most handlers of this queue running at once in this application. */
        private Integer concurrency;

        /** Most jobs of this queue claimed by one statement. */
        private Integer batchSize;

        /** Most jobs of this queue claimed ahead of free handler slots; 0 for none. Unset: workrow.defaults.prefetch, and when that is unset too, adaptive (about a tenth of a second of the handlers' measured throughput). */
        private Integer prefetch;

        public Integer getPrefetch() {
            return prefetch;
        }

        public void setPrefetch(Integer prefetch) {
            this.prefetch = prefetch;
        }

        /** Attempts a job of this queue gets before it is dead. */
        private Integer maxAttempts;

        /** Times one job of this queue may snooze before its next snooze counts as a failed attempt; defaults to workrow.defaults.max-snoozes. */
        private Integer maxSnoozes;

        /** At most this many of the queue's jobs running at once across every node, whatever each node's concurrency (declared in the database at start; QueueAdmin can override it at run time). Unset: no cluster-wide cap. Not with a prefetch. */
        private Integer globalConcurrency;

        /** At most this many jobs of one partition key running at once across every node that configures it: every node working the queue must set the same value. Unset: no per-key cap. Not with ordered or fairness (an ordered queue runs one job per key in order), nor with a prefetch. */
        private Integer keyConcurrency;

        public Integer getKeyConcurrency() {
            return keyConcurrency;
        }

        public void setKeyConcurrency(Integer keyConcurrency) {
            this.keyConcurrency = keyConcurrency;
        }

        public Integer getGlobalConcurrency() {
            return globalConcurrency;
        }

        public void setGlobalConcurrency(Integer globalConcurrency) {
            this.globalConcurrency = globalConcurrency;
        }

        public Integer getMaxSnoozes() {
            return maxSnoozes;
        }

        public void setMaxSnoozes(Integer maxSnoozes) {
            this.maxSnoozes = maxSnoozes;
        }

        /** How long a claim on a job of this queue lasts before another worker may take it. */
        private Duration lease;

        /** Lag above which this queue makes the workrowLag health indicator DOWN; defaults to workrow.health.max-lag. */
        private Duration maxLag;

        /** Longest a handler of this queue may run before it is interrupted and its attempt fails. */
        private Duration timeout;

        /** Times a job's lease may expire before it is dead; defaults to workrow.defaults.max-lease-expiries. */
        private Integer maxLeaseExpiries;

        /** The queue's circuit breaker, shared by every node; setting any of its keys guards the queue. */
        private Breaker breaker;

        /** Whether jobs with one partition key run one at a time, in enqueue order. Jobs without a partition key are not ordered. */
        private boolean ordered = false;

        /** On an ordered queue, what a failing job does to the jobs of its key behind it: block holds the key until the job completes or is dead; skip lets the key go on while the job waits for its retry. */
        private KeyFailure keyFailure = KeyFailure.BLOCK;

        /** How the queue's work is shared among fairness keys (a job's fairness key, else its partition key). */
        private Fairness fairness = new Fairness();

        public Fairness getFairness() {
            return fairness;
        }

        public void setFairness(Fairness fairness) {
            this.fairness = fairness;
        }

        public boolean isOrdered() {
            return ordered;
        }

        public void setOrdered(boolean ordered) {
            this.ordered = ordered;
        }

        public KeyFailure getKeyFailure() {
            return keyFailure;
        }

        public void setKeyFailure(KeyFailure keyFailure) {
            this.keyFailure = keyFailure;
        }

        public Integer getMaxLeaseExpiries() {
            return maxLeaseExpiries;
        }

        public void setMaxLeaseExpiries(Integer maxLeaseExpiries) {
            this.maxLeaseExpiries = maxLeaseExpiries;
        }

        public Breaker getBreaker() {
            return breaker;
        }

        public void setBreaker(Breaker breaker) {
            this.breaker = breaker;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        private final QueueBackoff backoff = new QueueBackoff();

        public Integer getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(Integer concurrency) {
            this.concurrency = concurrency;
        }

        public Integer getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(Integer batchSize) {
            this.batchSize = batchSize;
        }

        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public Duration getMaxLag() {
            return maxLag;
        }

        public void setMaxLag(Duration maxLag) {
            this.maxLag = maxLag;
        }

        public QueueBackoff getBackoff() {
            return backoff;
        }
    }

    /** One queue's backoff overrides; an unset value falls back to workrow.defaults.backoff. */
    public static class QueueBackoff {

        private Duration initial;

        private Double multiplier;

        private Duration max;

        private Double jitter;

        public Duration getInitial() {
            return initial;
        }

        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        public Double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(Double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }

        public Double getJitter() {
            return jitter;
        }

        public void setJitter(Double jitter) {
            this.jitter = jitter;
        }
    }

    /** A queue's circuit breaker: consecutive failures open it, and no node claims the queue's jobs until the cooldown is over; then probes decide. */
    public static class Breaker {

        /** Whether the breaker guards the queue. */
        private boolean enabled = true;

        /** Consecutive failed attempts that open the breaker. */
        private int failureThreshold = 5;

        /** How long an opened breaker stays open before it lets probes through. */
        private Duration cooldown = Duration.ofSeconds(30);

        /** Jobs let through while half-open; a success closes the breaker, a failure opens it again. */
        private int halfOpenProbes = 1;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getFailureThreshold() {
            return failureThreshold;
        }

        public void setFailureThreshold(int failureThreshold) {
            this.failureThreshold = failureThreshold;
        }

        public Duration getCooldown() {
            return cooldown;
        }

        public void setCooldown(Duration cooldown) {
            this.cooldown = cooldown;
        }

        public int getHalfOpenProbes() {
            return halfOpenProbes;
        }

        public void setHalfOpenProbes(int halfOpenProbes) {
            this.halfOpenProbes = halfOpenProbes;
        }
    }

    /** A queue's fair queuing among tenants (fairness keys); per-key weights and rates are set at run time through QueueAdmin or the workrow endpoint. */
    public static class Fairness {

        /** none: claim order only; weighted: keys share the starts by weight (default 1); burst: each key starts at most its rate per minute; spaced: each key starts one job per 1/rate. */
        private FairnessMode mode = FairnessMode.NONE;

        /** For burst and spaced: each key's starts per minute unless set for the key. */
        private int ratePerMinute = FairnessOptions.DEFAULT_RATE_PER_MINUTE;

        public FairnessMode getMode() {
            return mode;
        }

        public void setMode(FairnessMode mode) {
            this.mode = mode;
        }

        public int getRatePerMinute() {
            return ratePerMinute;
        }

        public void setRatePerMinute(int ratePerMinute) {
            this.ratePerMinute = ratePerMinute;
        }
    }

    /** What a failing job of an ordered queue does to the jobs of its key behind it. */
    public enum KeyFailure {
        /** The key waits until the failing job completes or is dead. */
        BLOCK,
        /** The key goes on while the failing job waits for its retry. */
        SKIP
    }

    /** One recurring job. */
    public static class Recurring {

        /** Spring's cron expression, seconds first: "0 0 2 * * *" is 02:00 every day. */
        private String cron;

        /** The time zone the expression's times are in (daylight saving included). */
        private String zone = "UTC";

        /** The queue the jobs go to; a handler for it must run in this application. */
        private String queue;

        /** The JSON handed to the queue's handler, read as its payload type. */
        private String payload = "{}";

        /** Whether the last tick missed while no node ran is enqueued at start (true) or skipped. */
        private boolean catchUp = true;

        public String getCron() {
            return cron;
        }

        public void setCron(String cron) {
            this.cron = cron;
        }

        public String getZone() {
            return zone;
        }

        public void setZone(String zone) {
            this.zone = zone;
        }

        public String getQueue() {
            return queue;
        }

        public void setQueue(String queue) {
            this.queue = queue;
        }

        public String getPayload() {
            return payload;
        }

        public void setPayload(String payload) {
            this.payload = payload;
        }

        public boolean isCatchUp() {
            return catchUp;
        }

        public void setCatchUp(boolean catchUp) {
            this.catchUp = catchUp;
        }
    }
}

package io.workrow.queue.worker;

import io.workrow.queue.JobHandler;
import io.workrow.queue.client.QueueNames;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.store.HeldJob;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Works queues in this process: per queue a {@link QueuePoller} and a bounded set of handler
 * threads, one {@link JobCompleter} writing successes in batches, and one {@link InsertListener}
 * connection for wake-ups. Usable from plain Java:
 *
 * <pre>{@code
 * WorkerRuntime runtime = WorkerRuntime.builder(dataSource)
 *         .handler("send-receipt", ReceiptRequest.class, (request, job) -> receipts.send(request),
 *                 QueueOptions.defaults().withConcurrency(8))
 *         .build();
 * runtime.start();
 * ...
 * runtime.stop(); // stop claiming, let handlers finish, hand back the rest
 * }</pre>
 *
 * <p>Connections: the listener holds one; claims and batched completions borrow one briefly per
 * statement; failures, heartbeats and steps are written from the handler threads, so at most
 * {@code concurrency} more at once per queue.
 */
public final class WorkerRuntime implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkerRuntime.class);

    private final JobStore store;
    private final String workerId;
    private final Duration shutdownTimeout;
    private final InFlightJobs inFlight = new InFlightJobs();
    private final JobCompleter completer;
    private final Map<String, QueuePoller> pollers = new LinkedHashMap<>();
    private final Map<String, ExecutorService> handlerThreads = new LinkedHashMap<>();
    private final List<Thread> pollerThreads = new ArrayList<>();
    private final InsertListener listener;
    private final Set<String> queues;
    private final QueueMetrics metrics;
    private Thread listenerThread;
    private volatile boolean stopping;
    private volatile boolean started;

    private WorkerRuntime(Builder builder) {
        SqlIdentifier schema = builder.schema != null ? builder.schema : WorkrowMigrations.currentSchema(builder.dataSource);
        this.store = new JobStore(builder.dataSource, schema);
        this.workerId = builder.workerId != null ? builder.workerId : WorkerId.generate();
        this.shutdownTimeout = builder.shutdownTimeout;
        this.queues = Set.copyOf(builder.registrations.keySet());
        this.metrics = builder.metrics;
        this.completer = new JobCompleter(store, inFlight, builder.metrics, builder.completionBatchSize,
                builder.completionMaxDelay);
        JobExecutor executor = new JobExecutor(store, builder.codec, completer, inFlight, builder.errorDescriber,
                builder.metrics, builder.observer, () -> stopping);
        for (HandlerRegistration registration : builder.registrations.values()) {
            ExecutorService threads = HandlerThreads.forQueue(registration.queue(), registration.options().concurrency());
            handlerThreads.put(registration.queue(), threads);
            pollers.put(registration.queue(), new QueuePoller(registration, store, executor, inFlight,
                    builder.metrics, threads, workerId, builder.pollInterval));
        }
        // Without queues there is nothing to wake: no listener connection is held for nothing.
        this.listener = builder.listenNotify && !pollers.isEmpty()
                ? new InsertListener(builder.dataSource, this::wake, this::wakeAll)
                : null;
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The id this runtime writes to {@code claimed_by}. */
    public String workerId() {
        return workerId;
    }

    /** Whether the insert listener holds a live connection (false in poll-only mode). */
    public boolean isListenerConnected() {
        return listener != null && listener.isConnected();
    }

    /**
     * How long the insert listener has been without a connection (zero while connected or in
     * poll-only mode). Jobs still run meanwhile, found by polling, only later.
     */
    public Duration listenerDisconnectedFor() {
        return listener == null ? Duration.ZERO : listener.disconnectedFor();
    }

    /** Number of jobs claimed by this runtime whose result is not yet written. */
    public int inFlightCount() {
        return inFlight.size();
    }

    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        queues.forEach(metrics::register);
        completer.start("workrow-completer");
        if (listener != null) {
            listenerThread = daemon(listener, "workrow-listener");
        }
        for (QueuePoller poller : pollers.values()) {
            pollerThreads.add(daemon(poller, "workrow-poller-" + poller.queue()));
        }
        log.info("Workrow started: schema={}, queues={}, listen-notify={}, handler-threads={}, worker={}",
                store.schema(), describeQueues(), listener != null ? "on" : "off",
                HandlerThreads.virtual() ? "virtual" : "platform", workerId);
    }

    /**
     * Stops gracefully: no new claims, running handlers get up to the shutdown timeout to finish
     * and their results are written, then every job still held is returned to {@code pending}
     * with no owner at once, so no job waits for its lease to expire after a deploy.
     */
    public synchronized void stop() {
        if (!started || stopping) {
            return;
        }
        stopping = true;
        long deadline = System.nanoTime() + shutdownTimeout.toNanos();
        pollers.values().forEach(QueuePoller::stop);
        try {
            for (Thread thread : pollerThreads) {
                thread.join();
            }
            handlerThreads.values().forEach(ExecutorService::shutdown);
            for (ExecutorService threads : handlerThreads.values()) {
                threads.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            handlerThreads.values().forEach(ExecutorService::shutdownNow);
            completer.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        releaseHeldJobs();
        if (listener != null) {
            listener.stop();
            join(listenerThread);
        }
        log.info("Workrow stopped: worker={}", workerId);
    }

    @Override
    public void close() {
        stop();
    }

    private void releaseHeldJobs() {
        List<HeldJob> held = inFlight.snapshot();
        if (held.isEmpty()) {
            return;
        }
        try {
            Set<Long> released = store.releaseMany(held);
            held.forEach(job -> inFlight.remove(job.id()));
            log.info("Released {} unfinished jobs to pending at shutdown: ids={}", released.size(), released);
        } catch (RuntimeException e) {
            log.warn("Could not release {} jobs at shutdown; they run again after their leases expire: {}",
                    held.size(), e.toString());
        }
    }

    private void wake(String queue) {
        QueuePoller poller = pollers.get(queue);
        if (poller != null) {
            poller.wake();
        }
    }

    private void wakeAll() {
        pollers.values().forEach(QueuePoller::wake);
    }

    private String describeQueues() {
        return pollers.values().stream()
                .map(QueuePoller::describe)
                .sorted()
                .collect(Collectors.joining(", ", "[", "]"));
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Settings for a {@link WorkerRuntime}; every setting has a default but the handlers. */
    public static final class Builder {

        /** Default safety-net poll interval when a queue is idle. */
        public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
        /** Default time running handlers get to finish at shutdown. */
        public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
        /** Default most jobs completed by one statement. */
        public static final int DEFAULT_COMPLETION_BATCH_SIZE = 100;
        /** Default longest a success waits to be batched with others. */
        public static final Duration DEFAULT_COMPLETION_MAX_DELAY = Duration.ofMillis(2);

        private final DataSource dataSource;
        private final Map<String, HandlerRegistration> registrations = new LinkedHashMap<>();
        private SqlIdentifier schema;
        private PayloadCodec codec = JacksonPayloadCodec.withDefaultMapper();
        private String workerId;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
        private boolean listenNotify = true;
        private int completionBatchSize = DEFAULT_COMPLETION_BATCH_SIZE;
        private Duration completionMaxDelay = DEFAULT_COMPLETION_MAX_DELAY;
        private ErrorDescriber errorDescriber = ErrorDescriber.classAndMessage(ErrorDescriber.DEFAULT_MAX_LENGTH);
        private QueueMetrics metrics = QueueMetrics.NOOP;
        private JobObserver observer = JobObserver.NOOP;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /** The schema holding {@code workrow_job}; default: the connection's current schema. */
        public Builder schema(String schema) {
            this.schema = SqlIdentifier.of("schema", schema);
            return this;
        }

        public Builder codec(PayloadCodec codec) {
            this.codec = codec;
            return this;
        }

        /** Overrides the generated worker id (host:pid:random); it must be unique per process incarnation. */
        public Builder workerId(String workerId) {
            this.workerId = workerId;
            return this;
        }

        /** How often an idle queue looks for due jobs without a notification. */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = Settings.requirePositive("poll-interval", pollInterval);
            return this;
        }

        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = Settings.requireNotNegative("shutdown-timeout", shutdownTimeout);
            return this;
        }

        /** Whether to wake pollers with LISTEN/NOTIFY; off for poll-only mode (e.g. behind PgBouncer). */
        public Builder listenNotify(boolean listenNotify) {
            this.listenNotify = listenNotify;
            return this;
        }

        public Builder completionBatchSize(int size) {
            this.completionBatchSize = Settings.requireAtLeast("completion-batch-size", 1, size);
            return this;
        }

        public Builder completionMaxDelay(Duration delay) {
            this.completionMaxDelay = Settings.requireNotNegative("completion-max-delay", delay);
            return this;
        }

        /** How exceptions become {@code last_error}: the place to redact. */
        public Builder errorDescriber(ErrorDescriber errorDescriber) {
            this.errorDescriber = errorDescriber;
            return this;
        }

        /** Where claims, outcomes and handler times are reported (e.g. {@code MicrometerQueueMetrics}). */
        public Builder metrics(QueueMetrics metrics) {
            this.metrics = metrics;
            return this;
        }

        /** Wraps each handler run, e.g. in a Micrometer Observation ({@code ObservationJobObserver}). */
        public Builder observer(JobObserver observer) {
            this.observer = observer;
            return this;
        }

        /** Registers the handler for {@code queue}, reading payloads as {@code payloadType}. */
        public <T> Builder handler(String queue, Class<T> payloadType, JobHandler<T> handler, QueueOptions options) {
            return handler(queue, (Type) payloadType, handler, options);
        }

        /** Registers a handler whose payload type is generic, such as {@code List<Item>}. */
        @SuppressWarnings("unchecked")
        public Builder handler(String queue, Type payloadType, JobHandler<?> handler, QueueOptions options) {
            return handler(new HandlerRegistration(queue, payloadType, (JobHandler<Object>) handler, options));
        }

        /** Registers a handler; a queue has exactly one. */
        public Builder handler(HandlerRegistration registration) {
            QueueNames.check(registration.queue());
            HandlerRegistration existing = registrations.putIfAbsent(registration.queue(), registration);
            if (existing != null) {
                throw new IllegalArgumentException("Two handlers for queue '" + registration.queue() + "': "
                        + existing.description() + " and " + registration.description()
                        + ". A queue has exactly one handler.");
            }
            return this;
        }

        public WorkerRuntime build() {
            return new WorkerRuntime(this);
        }
    }
}

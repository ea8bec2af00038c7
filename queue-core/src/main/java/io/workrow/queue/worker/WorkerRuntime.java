package io.workrow.queue.worker;

import io.workrow.queue.JobFunction;
import io.workrow.queue.JobHandler;
import io.workrow.queue.JobQueue;
import io.workrow.queue.RecurringJob;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.QueueNames;
import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.store.CapStore;
import io.workrow.queue.store.ClaimStore;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.NotifyChannel;
import io.workrow.queue.store.QueueRuleStore;
import io.workrow.queue.store.RecoveryRule;
import io.workrow.queue.store.SchemaLookup;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import io.workrow.queue.worker.cluster.WorkerId;
import io.workrow.queue.worker.cluster.WorkerRegistry;
import io.workrow.queue.worker.connection.ConnectionBudget;
import io.workrow.queue.worker.connection.ReservedConnection;
import io.workrow.queue.worker.notify.InsertListener;
import io.workrow.queue.worker.periodic.RecurringScheduler;
import io.workrow.queue.worker.periodic.ScheduledJobPromoter;
import io.workrow.queue.worker.thread.HandlerThreads;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Works queues in this process: per queue a {@link QueuePoller} and a bounded set of handler
 * threads; one {@link ResultWriter} that records every outcome in batches; one {@link LeaseKeeper}
 * that renews the leases of every job held here; one {@link ScheduledJobPromoter} that makes
 * scheduled jobs pending when they fall due; one {@link InsertListener} connection for
 * wake-ups and cancellations. Usable from plain Java:
 *
 * <pre>{@code
 * WorkerRuntime runtime = WorkerRuntime.builder(dataSource)
 *         .handler("send-receipt", ReceiptRequest.class, (request, job) -> receipts.send(request),
 *                 QueueOptions.defaults().withConcurrency(8))
 *         .build();
 * runtime.start();
 * ...
 * runtime.stop(); // stop claiming, let handlers finish, hand back what has truly stopped
 * }</pre>
 *
 * <p>While started, the runtime keeps the JVM alive (one non-daemon thread), as a message listener
 * container does, so a worker-only application does not exit when its main thread ends.
 *
 * <p>Connections, at most at once: the listener, the result writer and the lease keeper hold one
 * each for as long as the runtime runs, so an application that takes every other connection of
 * its pool delays no renewal and no outcome; each poller, the promoter and maintenance borrow one
 * per statement; a transactional handler holds one while it runs.
 */
public final class WorkerRuntime implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkerRuntime.class);
    private static final Duration RESERVED_NETWORK_GRACE = Duration.ofSeconds(10);
    /** The most jobs one drain runs: more means a handler keeps its own queue busy. */
    public static final int MAX_DRAINED = 10_000;

    private final JobStore store;
    /** The statements of a claim's life: claims, renewals, ends. */
    private final ClaimStore claims;
    private final String workerId;
    private final Duration shutdownTimeout;
    private final InFlightJobs inFlight = new InFlightJobs();
    private final ResultWriter writer;
    private final CircuitBreakers breakers;
    private final QueueCaps caps;
    private final WorkerRegistry registry;
    private final LeaseKeeper keeper;
    private final ScheduledJobPromoter promoter;
    private final Map<String, HandlerRegistration> registrations;
    private final JobExecutor executor;
    private final Map<String, JobClaimer> drainClaimers = new LinkedHashMap<>();
    private final Map<String, QueuePoller> pollers = new LinkedHashMap<>();
    /** This node's shares of the queues' cluster-wide caps, by queue. */
    private final Map<String, CapShare> shares = new LinkedHashMap<>();
    private final Map<String, ExecutorService> handlerThreads = new LinkedHashMap<>();
    private final List<Thread> pollerThreads = new ArrayList<>();
    private final InsertListener listener;
    private final Set<String> queues;
    private final QueueMetrics metrics;
    private final ConnectionBudget connectionBudget;
    /** Null without recurring jobs. */
    private final RecurringScheduler recurring;
    private final ReservedConnection writerConnection;
    private final ReservedConnection keeperConnection;
    /** Borrowed at a handler's first extendLease or saveStep, kept until stop. */
    private final ReservedConnection handlerWritesConnection;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private Thread listenerThread;
    private volatile boolean stopping;
    private volatile boolean started;
    /** Whether the writer and the keeper run: from start, or from the first drain. */
    private boolean servicesStarted;

    private WorkerRuntime(Builder builder) {
        this.store = builder.store != null ? builder.store : defaultStore(builder);
        this.claims = store.claims();
        this.workerId = builder.workerId != null ? builder.workerId : WorkerId.generate();
        this.shutdownTimeout = builder.shutdownTimeout;
        this.queues = Set.copyOf(builder.registrations.keySet());
        this.registrations = Map.copyOf(builder.registrations);
        this.metrics = builder.metrics;
        // Results accepted and not yet recorded: a full batch being written plus one per handler
        // slot and per job a queue may hold in line (handed back at stop), so the writer never
        // starves the handlers, and a stalled writer stops the claims.
        this.breakers = new CircuitBreakers(store.breakers(), builder.metrics, builder.registrations.values().stream()
                .filter(registration -> registration.options().breaker() != null)
                .collect(Collectors.toMap(HandlerRegistration::queue, registration -> registration.options().breaker())));
        Set<String> orderedQueues = builder.registrations.values().stream()
                .filter(registration -> registration.options().ordering() != KeyOrdering.NONE)
                .map(HandlerRegistration::queue).collect(Collectors.toSet());
        this.caps = new QueueCaps(store.caps(), builder.registrations.values().stream()
                .filter(registration -> registration.options().globalConcurrency() > 0)
                .map(HandlerRegistration::queue).collect(Collectors.toSet()),
                builder.registrations.values().stream()
                .filter(registration -> registration.options().keyConcurrency() > 0)
                .map(HandlerRegistration::queue).collect(Collectors.toSet()));
        for (HandlerRegistration registration : builder.registrations.values()) {
            shares.put(registration.queue(), new CapShare(claims, caps, registration.queue(), workerId,
                    registration.options().concurrency(), registration.options().lease(),
                    registration.options().ordering() != KeyOrdering.NONE));
        }
        // A statement that outlives its timeout by this much waits on a socket nobody answers.
        int networkTimeoutMillis = (int) Math.min(Integer.MAX_VALUE,
                store.statementTimeout().plus(RESERVED_NETWORK_GRACE).toMillis());
        this.writerConnection = new ReservedConnection(builder.dataSource, "result writer", networkTimeoutMillis);
        Duration shortestLease = builder.registrations.values().stream().map(r -> r.options().lease())
                .min(Duration::compareTo).orElse(QueueOptions.DEFAULT_LEASE);
        Duration renewEvery = LeaseKeeper.renewalInterval(shortestLease);
        // A renewal that has not answered within a renewal interval is on a dead socket: the next
        // one runs on a new connection, so a half-open connection costs one renewal, not the lease.
        // Shorter than the statement timeout on purpose: a renewal waits on no lock (SKIP LOCKED),
        // so one that slow is better given up than waited for, and if it commits after all, it
        // renews leases and cannot move its holder's row back (JOB_RENEW_LEASES).
        this.keeperConnection = new ReservedConnection(builder.dataSource, "lease keeper",
                (int) Math.min(networkTimeoutMillis, renewEvery.toMillis()));
        this.handlerWritesConnection = new ReservedConnection(builder.dataSource, "handlers' own writes",
                networkTimeoutMillis);
        this.writer = new ResultWriter(claims.on(writerConnection), store.on(writerConnection).breakers(), inFlight,
                builder.metrics, breakers, queue -> {
            // An ordered queue's key frees up once the outcome is written, and so does a key-capped
            // queue's key slot in every node's count.
            if (orderedQueues.contains(queue) || caps.knownKeyCapped(queue)) {
                wake(queue);
            }
        }, builder.completionBatchSize,
                builder.completionMaxDelay, builder.completionBatchSize + builder.registrations.values().stream()
                        .mapToInt(registration -> registration.options().concurrency()
                                + registration.options().mostPrefetched()).sum());
        this.keeper = new LeaseKeeper(claims.on(keeperConnection), claims.on(handlerWritesConnection), writer::letGo,
                inFlight, workerId, builder.metrics, renewEvery, shares.values());
        // Only ordered queues need to know the other workers: buckets are owned per worker.
        this.registry = orderedQueues.isEmpty() ? null
                : new WorkerRegistry(store.workers(), workerId, orderedQueues, builder.heartbeatInterval, this::wake);
        this.executor = new JobExecutor(claims, builder.codec, builder.maxResultBytes, writer, keeper,
                builder.errorDescriber, builder.observer, inFlight,
                new SnoozeHolds(store.holds(), workerId));
        for (HandlerRegistration registration : builder.registrations.values()) {
            ExecutorService threads = HandlerThreads.forQueue(registration.queue(), registration.options().concurrency());
            handlerThreads.put(registration.queue(), threads);
            JobClaimer claimer = JobClaimer.keyCapped(JobClaimer.forQueue(registration, claimsFor(registration),
                    store.fairness(), workerId, registry), claimsFor(registration), registration.queue(), caps);
            pollers.put(registration.queue(), new QueuePoller(registration, claimer, executor, writer, breakers, inFlight,
                    builder.metrics, threads, builder.pollInterval, () -> caps.knownKeyCapped(registration.queue()),
                    shares.get(registration.queue())));
        }
        this.promoter = new ScheduledJobPromoter(claims, builder.pollInterval, this::wake);
        this.recurring = builder.recurring.isEmpty() ? null
                : new RecurringScheduler(List.copyOf(builder.recurring.values()), store.recurring(),
                        builder.producer != null ? builder.producer : new JdbcJobQueue(store, builder.codec),
                        recurringTransaction(store), store.recurring()::now);
        // Without queues there is nothing to wake: no listener connection is held for nothing.
        this.listener = builder.listenNotify && !pollers.isEmpty()
                ? new InsertListener(builder.dataSource, store.notifyChannel(), this::notified, this::wakeAll)
                : null;
        this.connectionBudget = new ConnectionBudget(builder.dataSource, listener != null, pollers.size(),
                builder.registrations.values().stream().filter(HandlerRegistration::isTransactional)
                        .mapToInt(r -> r.options().concurrency()).sum(), registry != null, recurring != null);
    }

    /**
     * The store for the schema's layout when the database answers; the latest layout's when it
     * does not yet (a runtime may be built before its database is up, and starts claiming once it
     * is).
     */
    private static JobStore defaultStore(Builder builder) {
        try {
            return JobStore.of(builder.dataSource, builder.schema != null ? builder.schema
                    : SchemaLookup.currentSchema(builder.dataSource));
        } catch (org.springframework.dao.DataAccessException e) {
            if (builder.schema == null) {
                throw e;
            }
            log.warn("Could not read the layout of schema {} ({}); running on the write-once layout of the latest"
                    + " migrations", builder.schema, e.getMessage());
            return new WriteOnceStore(builder.dataSource, builder.schema);
        }
    }

    /**
     * A transactional queue's claims fence each job alone: its handler's completion holds its claim
     * locked until the handler's transaction ends, which must hold up no other job's end.
     */
    private ClaimStore claimsFor(HandlerRegistration registration) {
        return registration.isTransactional() ? claims.perJob() : claims;
    }

    /**
     * The transaction a tick's advance and its job's insert share: on the store's own connections
     * (the producer's statements join it there), bounded like every statement of Workrow's threads.
     */
    private static TransactionTemplate recurringTransaction(JobStore store) {
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(store.dataSource()));
        transaction.setTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, store.statementTimeout().toSeconds())));
        return transaction;
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The id this runtime writes to {@code claimed_by}. */
    public String workerId() {
        return workerId;
    }

    /**
     * The buckets of the ordered {@code queue} this runtime owns now (ascending), as its last
     * heartbeat computed them; empty for a queue that is not ordered or before the first heartbeat.
     */
    public int[] ownedBuckets(String queue) {
        return registry == null ? new int[0] : registry.ownedBuckets(queue).clone();
    }

    /** Whether the insert listener holds a live connection (false in poll-only mode). */
    public boolean isListenerConnected() {
        return listener != null && listener.isConnected();
    }

    /** Whether wake-ups come by LISTEN/NOTIFY at all (false in poll-only mode or without queues). */
    public boolean isListening() {
        return listener != null;
    }

    /**
     * How long the insert listener has been without a connection (zero while connected or in
     * poll-only mode). Jobs still run meanwhile, found by polling, only later.
     */
    public Duration listenerDisconnectedFor() {
        return listener == null ? Duration.ZERO : listener.disconnectedFor();
    }

    /** Number of jobs claimed by this runtime whose outcome is not yet recorded. */
    public int inFlightCount() {
        return inFlight.size();
    }

    /**
     * Most jobs {@code queue}'s poller may claim now ahead of free handler slots: its fixed
     * prefetch, or the one it sizes from its handlers' throughput.
     */
    public int prefetch(String queue) {
        QueuePoller poller = pollers.get(queue);
        if (poller == null) {
            throw new IllegalArgumentException("no handler registered for queue " + queue);
        }
        return poller.prefetch();
    }

    /** Whether the runtime is started and every queue's poller thread is alive. */
    public boolean isHealthy() {
        return started && !stopping && pollerThreads.stream().allMatch(Thread::isAlive);
    }

    /** The queues whose poller thread has died (empty while healthy). */
    public List<String> deadPollers() {
        List<String> dead = new ArrayList<>();
        int i = 0;
        for (QueuePoller poller : pollers.values()) {
            if (i < pollerThreads.size() && !pollerThreads.get(i).isAlive()) {
                dead.add(poller.queue());
            }
            i++;
        }
        return dead;
    }

    public synchronized void start() {
        if (stopping) {
            throw new IllegalStateException("This runtime was stopped; a stopped runtime does not start again,"
                    + " build a new one");
        }
        if (started) {
            return;
        }
        started = true;
        connectionBudget.warnIfShort();
        if (registry != null) {
            registry.start();
        }
        Thread keepAlive = new Thread(this::awaitStop, "workrow-keep-alive");
        keepAlive.setDaemon(false);
        keepAlive.start();
        startServices();
        declareQueueRules();
        if (!pollers.isEmpty()) {
            promoter.start();
        }
        if (recurring != null) {
            recurring.start();
        }
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
     * Records this runtime's queues' recovery rules where every node's sweeper reads them, so a
     * queue's jobs are recovered by its own backoff and max-lease-expiries wherever the sweeper
     * runs. Nodes should agree; when they do not, the last to start wins, and says so.
     */
    private void declareQueueRules() {
        List<RecoveryRule> rules = registrations.values().stream()
                .map(registration -> registration.options().recoveryRule(registration.queue())).toList();
        try {
            for (QueueRuleStore.DeclaredRule replaced : store.queueRules().declare(workerId, rules)) {
                log.warn("queue={} had other recovery rules, declared by {}: {}; this worker's replace them on"
                        + " every node. Nodes working one queue should configure it alike", replaced.rule().queue(),
                        replaced.declaredBy(), replaced.rule());
            }
        } catch (RuntimeException e) {
            log.warn("Could not declare the recovery rules of {}; sweepers on other nodes recover their jobs by their"
                    + " own configuration until this runtime starts again: {}", queues, e.toString());
        }
        Map<String, CapStore.Configured> configuredCaps = new HashMap<>();
        registrations.values().forEach(registration -> configuredCaps.put(registration.queue(),
                new CapStore.Configured(positiveOrNull(registration.options().globalConcurrency()),
                        positiveOrNull(registration.options().keyConcurrency()))));
        try {
            for (CapStore.DeclaredCap replaced : store.caps().declare(workerId, configuredCaps)) {
                CapStore.Configured mine = configuredCaps.get(replaced.queue());
                log.warn("queue={} had global-concurrency {} and key-concurrency {}, declared by {}; this worker's {}"
                        + " and {} replace them on every node. Nodes working one queue should configure it alike",
                        replaced.queue(), unsetOr(replaced.configured().global()), unsetOr(replaced.configured().perKey()),
                        replaced.declaredBy(), unsetOr(mine.global()), unsetOr(mine.perKey()));
            }
        } catch (RuntimeException e) {
            log.warn("Could not declare the global-concurrency and key-concurrency of {}; the caps in the database"
                    + " stand until this runtime starts again: {}", queues, e.toString());
        }
    }

    private static Integer positiveOrNull(int cap) {
        return cap > 0 ? cap : null;
    }

    private static Object unsetOr(Integer cap) {
        return cap == null ? "unset" : cap;
    }

    /** The meters, the result writer and the lease keeper: what running a job needs besides a poller. */
    private void startServices() {
        if (servicesStarted) {
            return;
        }
        servicesStarted = true;
        queues.forEach(metrics::register);
        registrations.forEach((queue, registration) -> metrics.handlers(queue, registration.options().concurrency()));
        breakers.register();
        if (!pollers.isEmpty()) {
            // Before any job is claimed: renewals and outcomes then never wait for the pool.
            writerConnection.reserve();
            keeperConnection.reserve();
        }
        writer.start();
        keeper.start();
    }

    /**
     * Runs {@code queue}'s due jobs one at a time in the calling thread, through the queue's
     * handler and the same result path as the pollers, and returns each run in the order it ran.
     * The jobs due when it starts run (scheduled jobs that have fallen due are promoted first), and
     * so do the jobs the handlers enqueue that are due at once; a job that fails waits out its
     * backoff as {@code scheduled}, and one due again at once (a retry delay under a millisecond)
     * goes back unstarted and ends the drain: no job runs twice in one drain. A queue whose circuit breaker
     * is open yields nothing (a drain takes no half-open probes), nor do a fair queue's keys over
     * their rate. An ordered queue's keys are all this drain's, each in its order.
     *
     * <p>For tests: the runtime must not be started (its pollers would take the jobs). The first
     * drain starts the result writer and the lease keeper, and {@link #stop()} stops them. Jobs
     * must be committed: a drain refuses to run inside the calling thread's transaction, whose
     * uncommitted jobs the writer's own connection could not see.
     *
     * @throws IllegalArgumentException when no handler of this runtime takes {@code queue}
     * @throws IllegalStateException when the runtime is started or stopped, inside a transaction,
     *     when an outcome is not recorded within the statement timeout plus the shutdown timeout
     *     (the database unreachable), or when {@value #MAX_DRAINED} jobs ran and another is due (a
     *     handler that keeps enqueueing into its own queue); the job claimed then goes back unstarted
     */
    public synchronized List<DrainedJob> drain(String queue) {
        HandlerRegistration registration = registrations.get(queue);
        if (registration == null) {
            throw new IllegalArgumentException("No handler in this runtime takes queue '" + queue + "'; it has "
                    + new TreeSet<>(queues));
        }
        if (started || stopping) {
            throw new IllegalStateException("drain(" + queue + ") runs jobs in the calling thread and needs a runtime"
                    + " that is not started; this one is " + (stopping ? "stopped" : "started, and its pollers"
                    + " take the jobs (in Spring, set workrow.auto-startup=false)"));
        }
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("drain(" + queue + ") cannot run inside a transaction: the jobs it"
                    + " enqueued are not committed, and the outcomes are written on Workrow's own connection;"
                    + " drain outside it (no @Transactional on the test)");
        }
        startServices();
        JobClaimer claimer = drainClaimers.computeIfAbsent(queue,
                name -> JobClaimer.keyCapped(JobClaimer.forDrain(registration, claimsFor(registration),
                        store.fairness(), workerId), claimsFor(registration), name, caps));
        promoter.promoteDue();
        List<DrainedJob> runs = new ArrayList<>();
        Set<Long> ran = new HashSet<>();
        while (true) {
            long claimSentNanos = System.nanoTime();
            List<ClaimedPosition> claimed = claimer.claim(1, false);
            if (claimed.isEmpty()) {
                return runs;
            }
            RunningJob job = new RunningJob(claimed.get(0), registration, claimSentNanos);
            inFlight.add(job);
            if (!ran.add(job.id())) {
                // Failed with a retry delay under a millisecond, so due again at once: its next
                // attempt belongs to the next drain, and so does everything due after it.
                handBackUnstarted(job);
                return runs;
            }
            if (runs.size() == MAX_DRAINED) {
                handBackUnstarted(job);
                throw new IllegalStateException("drain(" + queue + ") ran " + MAX_DRAINED + " jobs and " + job
                        + " is due next; does a handler keep enqueueing into its own queue with no delay?");
            }
            RecordedOutcome recorded = awaitRecorded(job, executor.run(job));
            runs.add(new DrainedJob(job.id(), queue, job.job().attempt(), recorded.outcome(), recorded.status(),
                    recorded.result().error(), recorded.result().cause()));
        }
    }

    /** Gives a job a drain claimed and will not run back to pending, its attempt returned. */
    private void handBackUnstarted(RunningJob job) {
        job.markFinishing();
        awaitRecorded(job, writer.accept(JobResult.of(job, JobResult.Kind.RELEASE_UNSTARTED, Duration.ZERO)));
    }

    /** Waits for {@code job}'s outcome to be written, as long as the writer keeps trying before it would give up at stop. */
    private RecordedOutcome awaitRecorded(RunningJob job, CompletableFuture<RecordedOutcome> outcome) {
        Duration limit = store.statementTimeout().plus(shutdownTimeout);
        try {
            return outcome.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException(job + ": its outcome was not recorded within " + limit
                    + "; is the database reachable? The result writer keeps trying until the runtime stops", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(job + ": interrupted while its outcome was being recorded", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(job + ": recording its outcome failed", e.getCause());
        }
    }

    /**
     * Stops gracefully. No new claims; running handlers get up to the shutdown timeout to finish
     * and their outcomes are recorded. Handlers still running then are interrupted and get as long
     * again to stop; a job goes back to {@code pending} only once its handler has truly stopped.
     * A handler that ignores the interrupt keeps its job: its lease is no longer renewed, so it
     * expires and the sweeper hands the job on. Leases are renewed until then.
     */
    public synchronized void stop() {
        if (stopping) {
            return;
        }
        if (!started) {
            stopServices();
            return;
        }
        stopping = true;
        try {
            long deadline = System.nanoTime() + shutdownTimeout.toNanos();
            if (recurring != null) {
                recurring.stop();
            }
            pollers.values().forEach(QueuePoller::stop);
            reportNoHandlers();
            for (Thread thread : pollerThreads) {
                joinUntil(thread, deadline + TimeUnit.SECONDS.toNanos(5));
            }
            if (registry != null) {
                // Claiming has stopped: the others take this worker's buckets now, not after its
                // handlers drain. A key whose job still runs here waits for it anyway.
                registry.stop();
            }
            handlerThreads.values().forEach(ExecutorService::shutdown);
            if (!awaitHandlers(deadline)) {
                List<RunningJob> running = runningHandlers();
                log.info("Interrupting {} handlers still running after the shutdown timeout of {}: {}",
                        running.size(), shutdownTimeout, running);
                running.forEach(job -> job.requestStop(RunningJob.Stop.SHUTDOWN));
                if (!awaitHandlers(System.nanoTime() + shutdownTimeout.toNanos())) {
                    List<RunningJob> stuck = runningHandlers();
                    keeper.abandon(stuck);
                    for (RunningJob job : stuck) {
                        log.warn("{} handler ignored the interrupt and still runs; its job is not handed back"
                                + " while it runs: its lease is no longer renewed and expires within {}", job,
                                job.lease());
                    }
                }
            }
            promoter.stop();
            writer.stop(shutdownTimeout);
            keeper.stop();
            giveBackShares();
            if (listener != null) {
                listener.stop();
                joinUntil(listenerThread, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            }
            log.info("Workrow stopped: worker={}", workerId);
        } finally {
            writerConnection.release();
            keeperConnection.release();
            handlerWritesConnection.release();
            stopped.countDown();
        }
    }

    @Override
    public void close() {
        stop();
    }

    /**
     * Gives back this node's shares of cluster-wide caps at stop, so other nodes need not wait for
     * them to lapse; the share of a queue whose handler ignored the interrupt and still runs is left
     * to lapse with its lease, so that others do not run over the cap beside it.
     */
    private void giveBackShares() {
        List<String> queues = shares.values().stream().filter(share -> share.asked() && !share.inUse())
                .map(CapShare::queue).toList();
        if (queues.isEmpty()) {
            return;
        }
        shares.values().forEach(CapShare::forget);
        try {
            claims.dropShares(workerId, queues);
        } catch (RuntimeException e) {
            log.warn("Could not give back this node's shares of the queues' cluster-wide caps; they lapse within a"
                    + " lease: {}", e.toString());
        }
    }

    /**
     * Reports this runtime's queues as no longer worked, though its scrape may go on a while. A
     * meter that throws must not cut the shutdown short: its handlers still drain and hand back.
     */
    private void reportNoHandlers() {
        for (String queue : queues) {
            try {
                metrics.handlers(queue, 0);
            } catch (RuntimeException e) {
                log.warn("queue={} could not report its handler slots as 0 while stopping: {}", queue, e.toString());
            }
        }
    }

    /** Stops what a drain started, in a runtime that was never started. */
    private void stopServices() {
        if (!servicesStarted) {
            return;
        }
        stopping = true;
        try {
            writer.stop(shutdownTimeout);
            keeper.stop();
        } finally {
            writerConnection.release();
            keeperConnection.release();
            handlerWritesConnection.release();
        }
    }

    private boolean awaitHandlers(long deadlineNanos) {
        try {
            for (ExecutorService threads : handlerThreads.values()) {
                long remaining = deadlineNanos - System.nanoTime();
                if (!threads.awaitTermination(Math.max(0, remaining), TimeUnit.NANOSECONDS)) {
                    return false;
                }
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private List<RunningJob> runningHandlers() {
        return inFlight.snapshot().stream().filter(job -> job.handlerRunning() || !job.finishing()).toList();
    }

    private void awaitStop() {
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** An insert notification names a queue; a cancellation names a job this runtime may hold. */
    private void notified(String payload) {
        long cancelled = NotifyChannel.cancelledJob(payload);
        if (cancelled >= 0) {
            keeper.cancelled(cancelled);
            return;
        }
        wake(payload);
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

    private static void joinUntil(Thread thread, long deadlineNanos) {
        try {
            long millis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            thread.join(Math.max(1, millis));
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
        /** Default most outcomes written by one statement: a batch is whatever arrived during the last write, up to this. */
        public static final int DEFAULT_COMPLETION_BATCH_SIZE = 500;
        /** Default longest a success waits to be batched with others. */
        public static final Duration DEFAULT_COMPLETION_MAX_DELAY = Duration.ofMillis(2);
        /** Default largest result stored for a job, in UTF-8 bytes of JSON: 64 KiB. */
        public static final int DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

        /** Default interval of the worker heartbeat that ordered queues share buckets by. */
        public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(5);

        private final DataSource dataSource;
        private final Map<String, HandlerRegistration> registrations = new LinkedHashMap<>();
        private final Map<String, RecurringJob> recurring = new LinkedHashMap<>();
        private JobQueue producer;
        private SqlIdentifier schema;
        private JobStore store;
        private PayloadCodec codec = JacksonPayloadCodec.withDefaultMapper();
        private int maxResultBytes = DEFAULT_MAX_RESULT_BYTES;
        private String workerId;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
        private boolean listenNotify = true;
        private int completionBatchSize = DEFAULT_COMPLETION_BATCH_SIZE;
        private Duration completionMaxDelay = DEFAULT_COMPLETION_MAX_DELAY;
        private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
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

        /**
         * The store to run statements through (the one the application already built, with its
         * schema and statement timeout); when set, {@link #schema(String)} is not needed. It must
         * use this builder's {@code DataSource}.
         */
        public Builder store(JobStore store) {
            this.store = store;
            return this;
        }

        public Builder codec(PayloadCodec codec) {
            this.codec = codec;
            return this;
        }

        /**
         * The largest result a handler may return, in UTF-8 bytes of JSON; a larger one sends its
         * job to {@code dead} with the reason. Default {@value #DEFAULT_MAX_RESULT_BYTES}.
         */
        public Builder maxResultBytes(int maxResultBytes) {
            this.maxResultBytes = Settings.requireAtLeast("max-result-size", 1, maxResultBytes);
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

        /**
         * How often a runtime with ordered queues records that it is alive; a worker silent for three
         * intervals counts as dead, and its buckets move to the live ones.
         */
        public Builder heartbeatInterval(Duration heartbeatInterval) {
            this.heartbeatInterval = Settings.requirePositive("heartbeat-interval", heartbeatInterval);
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

        /**
         * Registers a handler for {@code queue} whose return value is the job's result
         * ({@link JobFunction}), reading payloads as {@code payloadType}.
         */
        @SuppressWarnings("unchecked")
        public <T> Builder function(String queue, Class<T> payloadType, JobFunction<T, ?> function,
                QueueOptions options) {
            return handler(new HandlerRegistration(queue, payloadType, (JobFunction<Object, ?>) function, options,
                    null, function.getClass().getName()));
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

        /**
         * Enqueues {@code job} on each of its ticks, once per tick across every runtime that
         * declares it; its queue must have a handler in this runtime.
         */
        public Builder recurring(RecurringJob job) {
            RecurringJob existing = recurring.putIfAbsent(job.name(), job);
            if (existing != null) {
                throw new IllegalArgumentException("Two recurring jobs named '" + job.name() + "': " + existing
                        + " and " + job);
            }
            return this;
        }

        /**
         * The producer recurring jobs are enqueued through (the application's, with its attempts
         * and payload cap); by default one on this runtime's store and codec. It must run its
         * statements on the store's {@code DataSource}, so that they join the tick's transaction.
         */
        public Builder producer(JobQueue producer) {
            this.producer = producer;
            return this;
        }

        public WorkerRuntime build() {
            for (RecurringJob job : recurring.values()) {
                HandlerRegistration registration = registrations.get(job.queue());
                if (registration == null) {
                    throw new IllegalArgumentException(job + " enqueues to queue '" + job.queue()
                            + "', which has no handler in this runtime");
                }
                try {
                    codec.decode(codec.encode(job.payload()), registration.payloadType());
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException(job + ": its payload cannot be read as "
                            + registration.payloadType().getTypeName() + ", the payload type of "
                            + registration.description() + ": " + e.getMessage(), e);
                }
            }
            return new WorkerRuntime(this);
        }
    }
}

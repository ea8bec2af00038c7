package io.workrow.queue.benchmark.compare;

import io.workrow.queue.benchmark.compare.Contender.Handler;
import io.workrow.queue.benchmark.compare.Contender.Pickup;
import io.workrow.queue.benchmark.compare.Results.Row;
import io.workrow.queue.worker.QueueOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Workrow beside the PostgreSQL queues a user would pick instead, against one scratch database in
 * one run: drain rates, enqueue rates, idle pick-up delay, worker memory, and the raw-SQL limit.
 * Prints one Markdown table and the ratios the performance targets are stated in. Run it with
 * {@code queue-benchmarks/scripts/compare.sh}, which installs the Node peers first.
 */
public final class CompareBenchmark {

    private static final String DATABASE = "workrow_compare";
    private static final int PRODUCERS = 8;
    private static final int CHUNK = 1000;
    private static final Duration TRICKLE_INTERVAL = Duration.ofMillis(20);

    static final Row DRAIN_NO_OP = new Row("drain, no-op handler, warm, jobs/s", true);
    static final Row DRAIN_NO_OP_COLD = new Row("drain, no-op handler, first jobs after start, jobs/s", true);
    static final Row DRAIN_SLEEP = new Row("drain, 5 ms handler, concurrency 64 in all, warm, jobs/s", true);
    static final Row ENQUEUE_SINGLE = new Row("enqueue one per call, 8 callers, rows/s", true);
    static final Row ENQUEUE_BULK = new Row("enqueue 1,000 per call, rows/s", true);
    static final Row PICKUP_NOTIFY_P50 = new Row("idle pick-up p50, LISTEN/NOTIFY, ms", false);
    static final Row PICKUP_NOTIFY_P99 = new Row("idle pick-up p99, LISTEN/NOTIFY, ms", false);
    static final Row PICKUP_POLL_P50 = new Row("idle pick-up p50, polling only, ms", false);
    static final Row PICKUP_POLL_P99 = new Row("idle pick-up p99, polling only, ms", false);
    static final Row DRAIN_SMALL_HISTORY = new Row("drain, no-op, warm, beside 10^5 finished jobs, jobs/s", true);
    static final Row DRAIN_LARGE_HISTORY = new Row("drain, no-op, warm, beside --retained finished jobs, jobs/s", true);
    static final Row HEAP_NO_OP = new Row("live heap after the no-op drain, MB per process", false);
    static final Row RSS_NO_OP = new Row("peak RSS in the no-op drain, MB per process", false);
    static final Row CPU_NO_OP = new Row("worker CPU per 1,000 no-op jobs, warm, ms (all processes)", false);
    static final Row DATABASE_CPU_NO_OP = new Row(
            "database CPU per 1,000 no-op jobs, warm, ms (the machine's busy time less the workers' and the harness's)",
            false);
    static final Row CORES_BUSY_NO_OP = new Row("machine CPU busy in the warm no-op drain, % of all cores", false);
    static final Row HEAP_SLEEP = new Row("live heap after the 5 ms drain, MB per process", false);
    static final Row RSS_SLEEP = new Row("peak RSS in the 5 ms drain, MB per process", false);

    private static final String RAW = "raw SQL";

    private final BenchDatabase database;
    private final Map<String, String> options;
    private final Results results;
    private final int jobs;
    private final int sleepJobs;
    private final int batch;

    private CompareBenchmark(BenchDatabase database, Map<String, String> options) {
        this.database = database;
        this.options = options;
        this.jobs = intOption("jobs", 100_000);
        this.sleepJobs = intOption("sleep-jobs", 50_000);
        // Without --batch the workers leave batch-size unset, as a user who tunes nothing does.
        this.batch = intOption("batch", QueueOptions.DEFAULT_BATCH_SIZE);
        this.results = new Results(List.of(DRAIN_NO_OP, DRAIN_NO_OP_COLD, DRAIN_SLEEP, ENQUEUE_SINGLE, ENQUEUE_BULK,
                PICKUP_NOTIFY_P50, PICKUP_NOTIFY_P99, PICKUP_POLL_P50, PICKUP_POLL_P99,
                HEAP_NO_OP, RSS_NO_OP, CPU_NO_OP, DATABASE_CPU_NO_OP, CORES_BUSY_NO_OP, HEAP_SLEEP, RSS_SLEEP,
                DRAIN_SMALL_HISTORY, DRAIN_LARGE_HISTORY), List.of("workrow", "workrow ×2"));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        String adminUrl = options.getOrDefault("url", "jdbc:postgresql://127.0.0.1:5432/postgres");
        String user = options.getOrDefault("user", "postgres");
        recreateDatabase(adminUrl, user);
        String url = adminUrl.substring(0, adminUrl.lastIndexOf('/') + 1) + DATABASE;
        Path logs = Path.of(options.getOrDefault("logs", "target/compare-logs"));
        BenchDatabase database = BenchDatabase.open(url, user, logs);
        try {
            new CompareBenchmark(database, options).run();
        } finally {
            database.dataSource().close();
        }
    }

    private void run() throws InterruptedException {
        // Unset or --prefetch=adaptive leaves the queue's prefetch unset, as a user who tunes nothing does.
        String prefetch = options.getOrDefault("prefetch", "adaptive");
        WorkrowContender workrow = new WorkrowContender(database, options.containsKey("batch") ? batch : null,
                "adaptive".equals(prefetch) ? null : Integer.valueOf(prefetch));
        List<Contender> contenders = new ArrayList<>(List.of(workrow));
        String peers = options.getOrDefault("peers", "");
        if (!peers.isEmpty() && Files.isDirectory(Path.of(peers, "node_modules"))) {
            contenders.add(NodeContender.graphileWorker(database, Path.of(peers), intOption("graphile-local-queue", 500)));
            contenders.add(NodeContender.pgBoss(database, Path.of(peers)));
        } else {
            System.out.println("No --peers directory with node_modules: graphile-worker and pg-boss are left out.");
        }
        contenders.add(new DbSchedulerContender(database));
        String only = options.get("only");
        if (only != null) {
            contenders.removeIf(contender -> !List.of(only.split(",")).contains(contender.name()));
        }
        int rounds = intOption("rounds", 1);
        System.out.printf("Side-by-side benchmark: %d no-op jobs, %d 5 ms jobs, batch %d, %d round(s), %d cores, "
                + "java %s, PostgreSQL %s%n", jobs, sleepJobs, batch, rounds, Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), database.jdbc().queryForObject("SHOW server_version", String.class));
        for (Contender contender : contenders) {
            contender.prepare();
        }
        for (int round = 1; round <= rounds; round++) {
            for (Contender contender : contenders) {
                System.out.printf("round %d: %s%n", round, contender.name());
                measure(contender);
            }
            if (contenders.contains(workrow)) {
                measureRawLimit(workrow);
            }
        }
        long retained = Long.parseLong(options.getOrDefault("retained", "0"));
        if (retained > 0 && contenders.contains(workrow)) {
            measureHistory(workrow, retained, rounds);
        }
        System.out.println();
        System.out.println(results.table());
        printRatios(contenders);
        System.out.println();
        for (Contender contender : contenders) {
            System.out.printf("- %s: %s%n", contender.name(), contender.configuration());
        }
        System.out.printf("- %s: Workrow's claim and fenced batch completion statements from %d threads, "
                + "batch %d, no runtime; completed jobs kept%n", RAW, intOption("raw-clients", 8), batch);
    }

    private void measure(Contender contender) throws InterruptedException {
        // --drain-only=true: the no-op drain and the bulk enqueue, for trying one change quickly.
        boolean drainOnly = Boolean.parseBoolean(options.getOrDefault("drain-only", "false"));
        contender.empty();
        vacuum();
        if (!drainOnly) {
            record(ENQUEUE_SINGLE, contender.name(), contender.enqueueSingle(intOption("single-jobs", 10_000), PRODUCERS));
        }
        // --skip-drains=true: the enqueue rates and pick-up delays only.
        boolean skipDrains = Boolean.parseBoolean(options.getOrDefault("skip-drains", "false"));
        for (Handler handler : skipDrains ? List.<Handler>of() : drainOnly ? List.of(Handler.NO_OP)
                : List.of(Handler.values())) {
            for (int processes : contender.drainProcesses()) {
                int count = handler == Handler.NO_OP ? jobs : sleepJobs;
                contender.empty();
                vacuum();
                // Twice the count: the first half warms the workers up, the second is measured.
                double bulk = contender.enqueueBulk(2 * count, CHUNK);
                if (handler == Handler.NO_OP && processes == contender.drainProcesses().get(0)) {
                    record(ENQUEUE_BULK, contender.name(), bulk);
                }
                vacuum();
                drain(results, contender, handler, processes, count);
            }
        }
        for (Pickup pickup : drainOnly ? List.<Pickup>of() : contender.pickups()) {
            contender.empty();
            vacuum();
            pickup(contender, pickup);
        }
        contender.empty();
    }

    /**
     * Drains a backlog of {@code 2 × count} jobs: the first {@code count} from the workers' start
     * (JIT compilation and all) give the cold rate, the last {@code count} the warm one; for no-op
     * handlers also the workers' and the database's CPU time over the warm part.
     */
    private void drain(Results into, Contender contender, Handler handler, int processes, int count)
            throws InterruptedException {
        String column = column(contender, processes);
        List<WorkerProcess> workers = contender.startDrainWorkers(handler, processes);
        try {
            workers.forEach(worker -> worker.awaitReady(Duration.ofMinutes(2)));
            long handledAtHalf = awaitHandledAtLeast(workers, count, Duration.ofMinutes(10));
            double half = WorkerProtocol.nowMillis();
            // Workers first, then the machine, at both ends, so that both windows are alike.
            boolean cpu = handler == Handler.NO_OP;
            double workersCpuAtHalf = cpu ? workers.stream().mapToDouble(WorkerProcess::markCpu).sum() : 0;
            Optional<MachineCpu> machineAtHalf = cpu ? MachineCpu.now() : Optional.empty();
            long handledAtEnd = awaitHandledAtLeast(workers, 2L * count, Duration.ofMinutes(10));
            double end = WorkerProtocol.nowMillis();
            double workersCpu = cpu ? workers.stream().mapToDouble(WorkerProcess::markCpu).sum() - workersCpuAtHalf : 0;
            Optional<MachineCpu> machineAtEnd = cpu ? MachineCpu.now() : Optional.empty();
            // Every job's end written, before the workers are told to stop.
            awaitUnfinishedAtMost(contender, 0, Duration.ofMinutes(2));
            double start = workers.stream().map(WorkerProcess::firstStart)
                    .filter(java.util.Objects::nonNull).mapToDouble(Double::doubleValue).min()
                    .orElseThrow(() -> new IllegalStateException(contender.name() + ": no handler ever started"));
            long handled = 0;
            double heap = 0;
            double rss = 0;
            for (WorkerProcess worker : workers) {
                WorkerReport report = worker.stop();
                handled += report.handled();
                heap = Math.max(heap, report.heapMb());
                rss = Math.max(rss, report.rssMb());
            }
            if (handled != 2L * count) {
                throw new IllegalStateException(column + " ran " + handled + " handlers for " + 2 * count + " jobs");
            }
            // The jobs counted at each end, which a batch may carry a little past the target.
            double cold = handledAtHalf / ((half - start) / 1000);
            double warm = (handledAtEnd - handledAtHalf) / ((end - half) / 1000);
            System.out.printf("  %s, %s: first %,d jobs in %.2f s, %,.0f jobs/s; next %,d in %.2f s, %,.0f jobs/s "
                    + "(handler runs %,d)%n", column, handler.argument, handledAtHalf, (half - start) / 1000, cold,
                    handledAtEnd - handledAtHalf, (end - half) / 1000, warm, handled);
            into.add(handler == Handler.NO_OP ? DRAIN_NO_OP : DRAIN_SLEEP, column, warm);
            into.add(handler == Handler.NO_OP ? HEAP_NO_OP : HEAP_SLEEP, column, heap);
            into.add(handler == Handler.NO_OP ? RSS_NO_OP : RSS_SLEEP, column, rss);
            if (handler == Handler.NO_OP) {
                double thousands = (handledAtEnd - handledAtHalf) / 1000.0;
                into.add(DRAIN_NO_OP_COLD, column, cold);
                into.add(CPU_NO_OP, column, workersCpu / thousands);
                if (machineAtHalf.isPresent() && machineAtEnd.isPresent()) {
                    into.add(DATABASE_CPU_NO_OP, column,
                            machineAtEnd.get().databaseMillisSince(machineAtHalf.get(), workersCpu) / thousands);
                    into.add(CORES_BUSY_NO_OP, column, machineAtEnd.get().percentBusySince(machineAtHalf.get()));
                }
            }
        } finally {
            workers.forEach(WorkerProcess::kill);
        }
    }

    private void pickup(Contender contender, Pickup pickup) throws InterruptedException {
        WorkerProcess worker = contender.startIdleWorker(pickup);
        try {
            worker.awaitReady(Duration.ofMinutes(2));
            // Let it settle into its idle wait, warm it up with a first trickle (its delays are
            // not counted), and measure the second.
            TimeUnit.SECONDS.sleep(2);
            int count = intOption("latency-jobs", 500);
            contender.trickle(count / 5, TRICKLE_INTERVAL);
            awaitUnfinishedAtMost(contender, 0, Duration.ofMinutes(2));
            worker.markCpu();
            TimeUnit.SECONDS.sleep(1);
            contender.trickle(count, TRICKLE_INTERVAL);
            awaitUnfinishedAtMost(contender, 0, Duration.ofMinutes(2));
            WorkerReport report = worker.stop();
            System.out.printf("  %s, idle pick-up by %s: p50 %.1f ms, p99 %.1f ms over %d jobs after %d to warm up%n",
                    contender.name(), pickup, report.p50Millis(), report.p99Millis(), count, count / 5);
            boolean notify = pickup == Pickup.LISTEN_NOTIFY;
            record(notify ? PICKUP_NOTIFY_P50 : PICKUP_POLL_P50, contender.name(), report.p50Millis());
            record(notify ? PICKUP_NOTIFY_P99 : PICKUP_POLL_P99, contender.name(), report.p99Millis());
        } finally {
            worker.kill();
        }
    }

    /**
     * Whether finished jobs kept as rows slow the queue down: the warm no-op drain (one JVM) beside
     * 10^5 finished jobs, then beside {@code retained}, then beside 10^5 again. Each side gets as
     * many drains (two per round beside {@code retained}, one per round at each 10^5), so that
     * comparing the best of each compares equals; drained jobs join the history as they finish.
     */
    private void measureHistory(WorkrowContender workrow, long retained, int rounds) throws InterruptedException {
        for (long history : List.of(100_000L, retained, 100_000L)) {
            workrow.empty();
            long started = System.nanoTime();
            workrow.retainFinished(history);
            vacuum();
            System.out.printf("  workrow: %,d finished jobs retained (written and vacuumed in %.0f s)%n", history,
                    (System.nanoTime() - started) / 1e9);
            int drains = history == retained ? 2 * rounds : rounds;
            for (int drain = 1; drain <= drains; drain++) {
                workrow.enqueueBulk(2 * jobs, CHUNK);
                vacuum();
                Results probe = new Results(List.of(DRAIN_NO_OP, DRAIN_NO_OP_COLD, HEAP_NO_OP, RSS_NO_OP, CPU_NO_OP,
                        DATABASE_CPU_NO_OP, CORES_BUSY_NO_OP),
                        List.of());
                drain(probe, workrow, Handler.NO_OP, 1, jobs);
                double rate = probe.best(DRAIN_NO_OP, "workrow").orElseThrow();
                record(history == retained ? DRAIN_LARGE_HISTORY : DRAIN_SMALL_HISTORY, "workrow", rate);
            }
        }
        workrow.empty();
    }

    private void measureRawLimit(WorkrowContender workrow) {
        workrow.empty();
        vacuum();
        // Twice the count, the second half measured: the same backlog and the same window as the
        // runtime's warm figure, so that the two are compared on equal terms.
        workrow.enqueueBulk(2 * jobs, CHUNK);
        vacuum();
        AtomicReference<Optional<MachineCpu>> atHalf = new AtomicReference<>(Optional.empty());
        RawSqlLimit.SecondHalf measured = RawSqlLimit.drain(workrow.claims(), intOption("raw-clients", 8), batch, jobs,
                () -> atHalf.set(MachineCpu.now()));
        double rate = measured.jobsPerSecond();
        Optional<MachineCpu> before = atHalf.get();
        Optional<MachineCpu> after = MachineCpu.now();
        if (workrow.unfinished() != 0) {
            throw new IllegalStateException(RAW + " left " + workrow.unfinished() + " jobs unfinished");
        }
        System.out.printf("  %s, batch %d: %,.0f jobs/s over the last %,d of %,d jobs%n", RAW, batch, rate,
                measured.jobs(), 2 * jobs);
        record(DRAIN_NO_OP, RAW, rate);
        // The raw drain's clients run in this process, so its CPU over the measured half is the
        // "worker" CPU.
        if (before.isPresent() && after.isPresent()) {
            double thousands = measured.jobs() / 1000.0;
            record(CPU_NO_OP, RAW, after.get().ownMillisSince(before.get()) / thousands);
            record(DATABASE_CPU_NO_OP, RAW, after.get().databaseMillisSince(before.get(), 0) / thousands);
            record(CORES_BUSY_NO_OP, RAW, after.get().percentBusySince(before.get()));
        }
        workrow.empty();
    }

    /**
     * Polls until the contender has at most {@code target} jobs unfinished: counts on the database,
     * so only outside the measured windows (pick-ups, and after a drain's warm part).
     */
    private static void awaitUnfinishedAtMost(Contender contender, long target, Duration timeout)
            throws InterruptedException {
        awaitNoneLeft(contender.name() + "'s unfinished jobs", () -> contender.unfinished() - target, timeout);
    }

    /**
     * Asks the workers how many handlers they have started until, together, at least {@code target}
     * have; returns how many had. Asking costs the database nothing, so a drain's database CPU is
     * the drain's own.
     */
    private static long awaitHandledAtLeast(List<WorkerProcess> workers, long target, Duration timeout)
            throws InterruptedException {
        return target - awaitNoneLeft("the workers' handlers", () -> target - handled(workers), timeout);
    }

    /**
     * Polls {@code left} until it is at most 0 and returns its last value. It polls rarely, so that
     * polling costs the contenders little: each wait sleeps half the time the last rate says is
     * left (1 to 500 ms), which puts most polls close to the end.
     */
    private static long awaitNoneLeft(String what, LongSupplier left, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long remaining = left.getAsLong();
        long polledAt = System.nanoTime();
        double perMilli = 0;
        while (remaining > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + ": " + remaining + " left after " + timeout);
            }
            long sleep = perMilli <= 0 ? 20 : (long) (remaining / perMilli / 2);
            TimeUnit.MILLISECONDS.sleep(Math.max(1, Math.min(500, sleep)));
            long before = remaining;
            remaining = left.getAsLong();
            long at = System.nanoTime();
            if (remaining < before) {
                perMilli = (before - remaining) / ((at - polledAt) / 1e6);
            }
            polledAt = at;
        }
        return remaining;
    }

    private static long handled(List<WorkerProcess> workers) {
        return workers.stream().mapToLong(WorkerProcess::askHandled).sum();
    }

    private void printRatios(List<Contender> contenders) {
        List<String> peers = contenders.stream().map(Contender::name).filter(name -> !name.equals("workrow")).toList();
        System.out.println("Ratios (targets in brackets):");
        for (Row row : List.of(DRAIN_NO_OP, DRAIN_SLEEP)) {
            Map.Entry<String, Double> fastest = results.bestOf(row, peers);
            for (String workrow : List.of("workrow", "workrow ×2")) {
                results.best(row, workrow).ifPresent(value -> {
                    if (fastest != null) {
                        System.out.printf(Locale.ROOT, "- %s, %s: %.2fx the fastest peer (%s)%s%n", row.label(),
                                workrow, value / fastest.getValue(), fastest.getKey(),
                                row == DRAIN_NO_OP ? " [>= 1.25x]" : "");
                    }
                    results.best(DRAIN_NO_OP, RAW).ifPresent(raw -> {
                        if (row == DRAIN_NO_OP) {
                            System.out.printf(Locale.ROOT, "- %s, %s: %.0f%% of the raw-SQL limit at batch %d [>= 85%%]%n",
                                    row.label(), workrow, 100 * value / raw, batch);
                        }
                    });
                });
            }
        }
        results.best(ENQUEUE_BULK, "workrow").ifPresent(bulk -> {
            Map.Entry<String, Double> fastest = results.bestOf(ENQUEUE_BULK, peers);
            System.out.printf(Locale.ROOT, "- %s: %,.0f rows/s [>= 100,000]%s%n", ENQUEUE_BULK.label(), bulk,
                    fastest == null ? "" : String.format(Locale.ROOT, ", %.2fx the fastest peer (%s) [>= 1.5x]",
                            bulk / fastest.getValue(), fastest.getKey()));
        });
        results.best(PICKUP_NOTIFY_P50, "workrow").ifPresent(p50 -> System.out.printf(Locale.ROOT,
                "- idle pick-up with LISTEN/NOTIFY: p50 %.1f ms [< 5], p99 %.1f ms [< 25]%n", p50,
                results.best(PICKUP_NOTIFY_P99, "workrow").orElse(Double.NaN)));
        results.best(DRAIN_LARGE_HISTORY, "workrow").ifPresent(large -> System.out.printf(Locale.ROOT,
                "- warm no-op drain beside %s finished jobs: %.0f%% of the rate beside 10^5 (best of two) [>= 90%%]%n",
                options.get("retained"), 100 * large / results.best(DRAIN_SMALL_HISTORY, "workrow").orElse(Double.NaN)));
        results.best(HEAP_SLEEP, "workrow").ifPresent(heap -> System.out.printf(Locale.ROOT,
                "- heap at concurrency 64 (one JVM, 5 ms handlers): ran in -Xmx256m, %.0f MB live after the drain [< 256]%n",
                heap));
    }

    private void record(Row row, String column, double value) {
        results.add(row, column, value);
    }

    private static String column(Contender contender, int processes) {
        return contender.drainProcesses().size() > 1 && processes > 1
                ? contender.name() + " ×" + processes : contender.name();
    }

    /** Settles the table statistics and dead rows left by the previous measurement. */
    private void vacuum() {
        database.jdbc().execute("VACUUM ANALYZE");
        database.jdbc().execute("CHECKPOINT");
    }

    private int intOption(String name, int fallback) {
        return Integer.parseInt(options.getOrDefault(name, Integer.toString(fallback)));
    }

    private static void recreateDatabase(String adminUrl, String user) throws Exception {
        try (Connection connection = DriverManager.getConnection(adminUrl, user, "");
                Statement statement = connection.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
            statement.execute("CREATE DATABASE " + DATABASE);
        }
    }

    private static Map<String, String> parse(String[] args) {
        return io.workrow.queue.benchmark.DrainBenchmark.parse(args);
    }
}

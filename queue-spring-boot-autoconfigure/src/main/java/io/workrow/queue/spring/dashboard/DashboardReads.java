package io.workrow.queue.spring.dashboard;

import io.workrow.queue.BreakerStatus;
import io.workrow.queue.ConcurrencyCap;
import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.JobDetail;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueHold;
import io.workrow.queue.QueueStats;
import io.workrow.queue.spring.dashboard.DashboardOverview.Breaker;
import io.workrow.queue.spring.dashboard.DashboardOverview.DeadGroup;
import io.workrow.queue.spring.dashboard.DashboardOverview.Fairness;
import io.workrow.queue.spring.dashboard.DashboardOverview.Hold;
import io.workrow.queue.spring.dashboard.DashboardOverview.QueueView;
import io.workrow.queue.spring.dashboard.DashboardOverview.Recurring;
import io.workrow.queue.spring.dashboard.DashboardOverview.RunningJob;
import io.workrow.queue.spring.dashboard.DashboardOverview.Writes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the page shows, read through {@link QueueAdmin} and shaped for it. Every open page polls
 * the overview; they share one read (see {@link #overview}), so a room of open dashboards costs
 * the database what one does. Each part of the overview is read on its own: a part that fails is
 * named in {@link DashboardOverview#unavailable()} and shown empty, and the rest of the page stays.
 */
final class DashboardReads {

    private static final Logger log = LoggerFactory.getLogger(DashboardReads.class);

    /** Rows per list: a page for people, not an export. */
    static final int ROWS = 100;

    /** Dead groups shown: each reads the newest five of its kind. */
    static final int GROUPS = 20;

    /** The longest one overview read serves the pages that poll after it. */
    private static final Duration SHARED_FOR = Duration.ofSeconds(2);

    /**
     * Parts not begun this long after the read began are left out: with the statement timeout
     * (10 s by default) the slowest answer stays inside the page's 15 s wait.
     */
    static final Duration READ_WITHIN = Duration.ofSeconds(4);

    private final QueueAdmin admin;
    private final ThroughputHistory throughput;
    private final Clock clock;
    private final boolean showPayloads;
    private final long refreshMillis;
    private final Duration sharedFor;
    private @Nullable DashboardOverview shared;
    private Instant sharedStarted = Instant.MIN;
    private Instant sharedEnded = Instant.MIN;

    DashboardReads(QueueAdmin admin, Clock clock, boolean showPayloads, Duration refreshInterval) {
        this.admin = admin;
        this.throughput = new ThroughputHistory(admin, clock);
        this.clock = clock;
        this.showPayloads = showPayloads;
        this.refreshMillis = refreshInterval.toMillis();
        Duration half = refreshInterval.dividedBy(2);
        this.sharedFor = half.compareTo(SHARED_FOR) < 0 ? half : SHARED_FOR;
    }

    /**
     * The overview. A read serves the requests that arrive within half the refresh interval (at
     * most {@link #SHARED_FOR}) after it ended, and requests that arrive while it runs wait for it
     * instead of reading again. {@code fresh} asks for a read that began after the request
     * arrived, whatever the age of the last one: the page asks for it right after a write it sent
     * to the endpoint, and must see the write; fresh requests that wait together share one read.
     */
    DashboardOverview overview(DashboardWrites writes, boolean fresh) {
        Instant asked = clock.instant();
        DashboardOverview overview;
        synchronized (this) {
            boolean usable = shared != null && (fresh ? sharedStarted.isAfter(asked)
                    : clock.instant().isBefore(sharedEnded.plus(sharedFor)));
            if (!usable) {
                sharedStarted = clock.instant();
                shared = read(sharedStarted);
                sharedEnded = clock.instant();
            }
            overview = shared;
        }
        return overview.withWrites(new Writes(writes.allowed(), writes.reason()));
    }

    private DashboardOverview read(Instant now) {
        Parts parts = new Parts(now.plus(READ_WITHIN));
        Map<String, BreakerStatus> breakers = parts.read("breakers", List::<BreakerStatus>of, admin::breakers)
                .stream().collect(Collectors.toMap(BreakerStatus::queue, Function.identity()));
        List<QueueHold> holds = parts.read("holds", List::<QueueHold>of, admin::holds);
        Map<String, ConcurrencyCap> caps = parts.read("caps", List::<ConcurrencyCap>of, admin::concurrencyCaps)
                .stream().collect(Collectors.toMap(ConcurrencyCap::queue, Function.identity()));
        Map<String, QueueStats> stats = parts.read("queues", List::<QueueStats>of, admin::stats).stream()
                .collect(Collectors.toMap(QueueStats::queue, Function.identity()));
        // Stats list every paused queue, idle or not; a queue with only a breaker row is added here.
        TreeSet<String> names = new TreeSet<>(stats.keySet());
        names.addAll(breakers.keySet());
        holds.forEach(hold -> names.add(hold.queue()));
        Map<String, long[][]> perMinute = perMinute(
                parts.read("throughput", List::<FinishedPerMinute>of, throughput::lastHour), now);
        List<QueueView> queues = new ArrayList<>();
        for (String name : names) {
            QueueStats row = stats.getOrDefault(name, new QueueStats(name, 0, 0, 0, 0, 0, Duration.ZERO, false));
            long[][] series = perMinute.getOrDefault(name, new long[2][ThroughputHistory.MINUTES]);
            Hold queueHold = holds.stream().filter(hold -> hold.queue().equals(name) && hold.wholeQueue())
                    .findFirst().map(hold -> new Hold(hold.until().toEpochMilli(), hold.reason())).orElse(null);
            List<QueueHold> keyHolds = holds.stream()
                    .filter(hold -> hold.queue().equals(name) && !hold.wholeQueue()).toList();
            queues.add(new QueueView(name, row.pending(), row.due(), row.scheduled(), row.running(), row.dead(),
                    row.oldestDueAge().toMillis(), row.paused(), breaker(breakers.get(name)),
                    boxed(series[0]), boxed(series[1]), row.waiting(), queueHold, keyHolds.size(),
                    keyHolds.stream().map(hold -> hold.until().toEpochMilli()).max(Long::compare).orElse(null),
                    caps.containsKey(name) ? caps.get(name).cap() : null,
                    caps.containsKey(name) ? caps.get(name).keyCap() : null));
        }
        List<RunningJob> running = parts.read("running jobs", List::<RunningJob>of,
                () -> admin.runningJobs(null, ROWS).stream()
                        .map(job -> new RunningJob(job.id(), job.queue(), job.attempts(), job.maxAttempts(),
                                job.claimedBy(), millis(job.leaseExpiresAt()), millis(job.runAt())))
                        .toList());
        List<DeadGroup> deadGroups = parts.read("dead jobs", List::<DeadGroup>of,
                () -> admin.deadErrorGroups(null, GROUPS).stream()
                        .map(group -> new DeadGroup(group.queue(), group.error(), group.jobs(),
                                millis(group.lastDiedAt()), group.newestIds(), group.example()))
                        .toList());
        List<Fairness> fairness = parts.read("fairness", List::<Fairness>of,
                () -> admin.fairnessSettings(null, ROWS).stream()
                        .map(setting -> new Fairness(setting.queue(), setting.fairnessKey(), setting.weight(),
                                setting.ratePerMinute()))
                        .toList());
        List<Recurring> recurring = parts.read("recurring jobs", List::<Recurring>of,
                () -> admin.recurringJobs().stream()
                        .map(job -> new Recurring(job.name(), job.queue(), job.cron(), job.zone(),
                                millis(job.lastTick()), millis(job.nextTick())))
                        .toList());
        return new DashboardOverview(now.toEpochMilli(), refreshMillis, new Writes(false, null), queues, running,
                deadGroups, QueueAdmin.DEAD_GROUP_SAMPLE, fairness, recurring, List.copyOf(parts.unavailable));
    }

    /**
     * The parts of one overview, each read on its own: a part that fails, or that would begin
     * after the read's time is up, is shown empty and named in {@code unavailable}, so that one
     * slow or broken read costs its own section, not the page.
     */
    private final class Parts {

        private final Instant end;
        private final List<String> unavailable = new ArrayList<>();

        Parts(Instant end) {
            this.end = end;
        }

        <T> T read(String name, Supplier<T> empty, Supplier<T> read) {
            if (!clock.instant().isBefore(end)) {
                unavailable.add(name + ": not read, the overview took over " + READ_WITHIN.toSeconds() + " s");
                return empty.get();
            }
            try {
                return read.get();
            } catch (RuntimeException e) {
                log.warn("Dashboard could not read {}; the page shows it as unavailable", name, e);
                unavailable.add(name + ": " + e.getClass().getSimpleName());
                return empty.get();
            }
        }
    }

    /** One job's row, its payload, headers and step withheld unless the page may show them. */
    Optional<Map<String, @Nullable Object>> job(long id) {
        return admin.job(id).map(found -> showPayloads ? found : found.withoutPayload()).map(this::view)
                .map(view -> {
                    admin.dependencies(id).ifPresent(dependencies -> {
                        view.put("waitsFor", dependencies.waitsFor().stream().map(DashboardReads::link).toList());
                        view.put("waitedOnBy", dependencies.waitedOnBy().stream().map(DashboardReads::link).toList());
                        view.put("waitedOnByCount", dependencies.waitedOnByCount());
                    });
                    return view;
                });
    }

    private static Map<String, @Nullable Object> link(io.workrow.queue.JobDependencies.Link link) {
        Map<String, @Nullable Object> view = new LinkedHashMap<>();
        view.put("id", link.id());
        view.put("queue", link.queue());
        view.put("status", link.status() == null ? null : link.status().columnValue());
        view.put("settled", link.settled());
        return view;
    }

    private Map<String, @Nullable Object> view(JobDetail job) {
        Map<String, @Nullable Object> view = new LinkedHashMap<>();
        view.put("id", job.id());
        view.put("queue", job.queue());
        view.put("status", job.status().name().toLowerCase(java.util.Locale.ROOT));
        view.put("attempts", job.attempts());
        view.put("maxAttempts", job.maxAttempts());
        view.put("leaseExpiries", job.leaseExpiries());
        view.put("priority", job.priority());
        view.put("partitionKey", job.partitionKey());
        view.put("fairnessKey", job.fairnessKey());
        view.put("idempotencyKey", job.idempotencyKey());
        view.put("runAt", millis(job.runAt()));
        view.put("createdAt", millis(job.createdAt()));
        view.put("startedAt", millis(job.startedAt()));
        view.put("finishedAt", millis(job.finishedAt()));
        view.put("updatedAt", millis(job.updatedAt()));
        view.put("claimedBy", job.claimedBy());
        view.put("leaseExpiresAt", millis(job.leaseExpiresAt()));
        view.put("lastError", job.lastError());
        view.put("lastErrorAt", millis(job.lastErrorAt()));
        view.put("payloadShown", showPayloads);
        view.put("payload", job.payload());
        view.put("headers", job.headers());
        view.put("step", job.step());
        return view;
    }

    /** Per queue, completed [0] and dead [1] per minute of the window, oldest first. */
    private static Map<String, long[][]> perMinute(List<FinishedPerMinute> rows, Instant now) {
        Instant start = ThroughputHistory.windowStart(now);
        Map<String, long[][]> series = new LinkedHashMap<>();
        for (FinishedPerMinute row : rows) {
            int index = (int) Duration.between(start, row.minute()).toMinutes();
            if (index >= 0 && index < ThroughputHistory.MINUTES) {
                long[][] queue = series.computeIfAbsent(row.queue(), name -> new long[2][ThroughputHistory.MINUTES]);
                queue[0][index] += row.completed();
                queue[1][index] += row.dead();
            }
        }
        return series;
    }

    private static List<Long> boxed(long[] values) {
        return Arrays.stream(values).boxed().toList();
    }

    private static @Nullable Breaker breaker(@Nullable BreakerStatus status) {
        return status == null ? null : new Breaker(status.state().columnValue(), status.failures(),
                millis(status.openUntil()), millis(status.changedAt()), status.reason());
    }

    private static @Nullable Long millis(@Nullable Instant instant) {
        return instant == null ? null : instant.toEpochMilli();
    }
}

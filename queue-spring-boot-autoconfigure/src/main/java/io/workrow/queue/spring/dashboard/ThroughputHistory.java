package io.workrow.queue.spring.dashboard;

import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.QueueAdmin;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Jobs finished per queue and minute over the last hour, for the page's charts. Counting an hour
 * reads every job finished in it, so the hour is read once and then only from two minutes before
 * the last read (for transactions that committed late, and a database clock a little behind this
 * one); the open pages share one read every {@link #FRESH_FOR}.
 */
final class ThroughputHistory {

    /** The minutes a chart shows, the current one included. */
    static final int MINUTES = 60;

    private static final Duration FRESH_FOR = Duration.ofSeconds(2);
    private static final Duration READ_AGAIN = Duration.ofMinutes(2);

    private final QueueAdmin admin;
    private final Clock clock;
    private final NavigableMap<Instant, Map<String, FinishedPerMinute>> byMinute = new TreeMap<>();
    private @Nullable Instant readAt;

    ThroughputHistory(QueueAdmin admin, Clock clock) {
        this.admin = admin;
        this.clock = clock;
    }

    /** The first minute of the window that ends with the minute of {@code now}. */
    static Instant windowStart(Instant now) {
        return now.truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(MINUTES - 1));
    }

    /** Every queue's finished jobs per minute inside the window, oldest first. */
    synchronized List<FinishedPerMinute> lastHour() {
        Instant now = clock.instant();
        Instant start = windowStart(now);
        if (readAt == null || !now.isBefore(readAt.plus(FRESH_FOR))) {
            Instant since = readAt == null ? start
                    : max(start, readAt.minus(READ_AGAIN).truncatedTo(ChronoUnit.MINUTES));
            List<FinishedPerMinute> fresh = admin.finishedPerMinute(since);
            byMinute.tailMap(since.truncatedTo(ChronoUnit.MINUTES), true).clear();
            for (FinishedPerMinute row : fresh) {
                byMinute.computeIfAbsent(row.minute(), minute -> new LinkedHashMap<>()).put(row.queue(), row);
            }
            readAt = now;
        }
        byMinute.headMap(start, false).clear();
        return byMinute.values().stream().flatMap(queues -> queues.values().stream()).toList();
    }

    private static Instant max(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }
}

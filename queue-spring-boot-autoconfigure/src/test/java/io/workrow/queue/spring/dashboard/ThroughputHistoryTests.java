package io.workrow.queue.spring.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.workrow.queue.FinishedPerMinute;
import io.workrow.queue.QueueAdmin;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The hour is read once, then only from two minutes before the last read, never counted twice. */
class ThroughputHistoryTests {

    private static final Instant T0 = Instant.parse("2026-11-24T10:30:20Z");

    private final AtomicReference<Instant> now = new AtomicReference<>(T0);
    private final Clock clock = new Clock() {
        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    private final QueueAdmin admin = mock(QueueAdmin.class);
    private final ThroughputHistory history = new ThroughputHistory(admin, clock);

    private static FinishedPerMinute row(String minute, long completed) {
        return new FinishedPerMinute("q", Instant.parse(minute), completed, 0);
    }

    @Test
    void readsTheHourOnceThenOnlyTheNewestMinutesReplacingWhatItHad() {
        when(admin.finishedPerMinute(any())).thenReturn(
                List.of(row("2026-11-24T09:40:00Z", 5), row("2026-11-24T10:29:00Z", 7), row("2026-11-24T10:30:00Z", 1)));

        assertThat(history.lastHour()).extracting(FinishedPerMinute::completed).containsExactly(5L, 7L, 1L);
        verify(admin).finishedPerMinute(Instant.parse("2026-11-24T09:31:00Z"));

        now.set(T0.plusSeconds(1));
        history.lastHour();
        verify(admin, times(1)).finishedPerMinute(any());

        // Later: the current minute has grown; the read starts two minutes before the last read.
        when(admin.finishedPerMinute(Instant.parse("2026-11-24T10:28:00Z")))
                .thenReturn(List.of(row("2026-11-24T10:29:00Z", 7), row("2026-11-24T10:30:00Z", 4)));
        now.set(T0.plusSeconds(3));
        assertThat(history.lastHour()).extracting(FinishedPerMinute::completed).containsExactly(5L, 7L, 4L);

        // An hour on, the first minutes have left the window.
        when(admin.finishedPerMinute(Instant.parse("2026-11-24T10:31:00Z"))).thenReturn(List.of());
        now.set(T0.plus(Duration.ofMinutes(60)));
        assertThat(history.lastHour()).as("minutes before 10:31 have left the window").isEmpty();
    }
}

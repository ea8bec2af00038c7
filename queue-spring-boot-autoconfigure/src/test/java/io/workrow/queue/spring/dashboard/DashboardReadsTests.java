package io.workrow.queue.spring.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.spy;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import io.workrow.queue.JobRequest;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.spring.dashboard.DashboardOverview.QueueView;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.QueryTimeoutException;

/** The overview against a real database: one read shared by every open page, and a failed part costs only itself. */
class DashboardReadsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());
    private final Clock clock = new Clock() {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    private final DashboardWrites writes = DashboardWrites.through("/actuator/workrow");
    private QueueAdmin admin;
    private DashboardReads reads;

    @BeforeEach
    void setUp() {
        database.deleteAllJobs();
        admin = spy(new JdbcQueueAdmin(database.store()));
        reads = new DashboardReads(admin, clock, false, Duration.ofSeconds(5));
        new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper())
                .enqueue(JobRequest.of("webhooks", Map.of("url", "https://example.com")));
    }

    @Test
    void pagesPollingTogetherShareOneReadAndAPageThatWroteReadsAnew() throws Exception {
        ExecutorService pages = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<DashboardOverview>> polls = new ArrayList<>();
            for (int page = 0; page < 8; page++) {
                polls.add(pages.submit(() -> {
                    start.await();
                    return reads.overview(writes, false);
                }));
            }
            start.countDown();
            for (Future<DashboardOverview> poll : polls) {
                assertThat(poll.get().queues()).extracting(QueueView::queue).containsExactly("webhooks");
            }
        } finally {
            pages.shutdownNow();
        }
        now.set(now.get().plusSeconds(1));
        reads.overview(writes, false);
        verify(admin, times(1)).stats();

        admin.pause("webhooks", "by hand");
        assertThat(reads.overview(writes, true).queues()).singleElement().extracting(QueueView::paused)
                .as("a fresh read sees the write just made").isEqualTo(true);
        verify(admin, times(2)).stats();

        now.set(now.get().plus(Duration.ofMillis(2_500)));
        reads.overview(writes, false);
        verify(admin, times(3)).stats();
    }

    @Test
    @SuppressWarnings("unchecked")
    void aQueueCountsItsWaitingJobsAndAJobsPageListsWhatItWaitsForAndWhatWaitsForIt() {
        JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
        long first = jobQueue.enqueue(JobRequest.of("webhooks", Map.of("url", "https://example.com/1")));
        long waiting = jobQueue.enqueue(JobRequest.of("webhooks", Map.of("url", "https://example.com/2"))
                .after(first));

        assertThat(reads.overview(writes, true).queues()).singleElement().extracting(QueueView::waiting).isEqualTo(1L);
        Map<String, Object> page = reads.job(waiting).orElseThrow();
        assertThat(page).containsEntry("status", "waiting");
        assertThat((List<Map<String, Object>>) page.get("waitsFor")).singleElement().satisfies(link -> assertThat(link)
                .containsEntry("id", first).containsEntry("status", "pending").containsEntry("settled", false));
        assertThat((List<Map<String, Object>>) reads.job(first).orElseThrow().get("waitedOnBy")).singleElement()
                .satisfies(link -> assertThat(link).containsEntry("id", waiting).containsEntry("status", "waiting"));
    }

    @Test
    void aPartThatCannotBeReadIsNamedAndShownEmptyWhileTheRestOfThePageStays() {
        doThrow(new QueryTimeoutException("canceling statement due to statement timeout"))
                .when(admin).finishedPerMinute(any());
        doThrow(new QueryTimeoutException("canceling statement due to statement timeout"))
                .when(admin).deadErrorGroups(any(), anyInt());

        DashboardOverview overview = reads.overview(writes, false);

        assertThat(overview.unavailable()).containsExactly("throughput: QueryTimeoutException",
                "dead jobs: QueryTimeoutException");
        assertThat(overview.queues()).singleElement().satisfies(queue -> {
            assertThat(queue.pending()).isEqualTo(1);
            assertThat(queue.completedPerMinute()).hasSize(ThroughputHistory.MINUTES).containsOnly(0L);
        });
        assertThat(overview.deadGroups()).isEmpty();
        assertThat(overview.writes().allowed()).isTrue();
    }

    @Test
    void partsNotBegunWithinTheReadsTimeAreLeftOutSoThePageIsAnsweredInTime() {
        doAnswer(call -> {
            now.set(now.get().plus(DashboardReads.READ_WITHIN));
            return call.callRealMethod();
        }).when(admin).stats();

        DashboardOverview overview = reads.overview(writes, false);

        assertThat(overview.queues()).extracting(QueueView::queue).containsExactly("webhooks");
        assertThat(overview.unavailable()).containsExactly(
                "throughput: not read, the overview took over 4 s", "running jobs: not read, the overview took over 4 s",
                "dead jobs: not read, the overview took over 4 s", "fairness: not read, the overview took over 4 s",
                "recurring jobs: not read, the overview took over 4 s");
        verify(admin, never()).runningJobs(any(), anyInt());
    }

    @Test
    void aReadSlowerThanTheSharingWindowStillServesThePagesThatWaitedForIt() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        doAnswer(call -> {
            reading.countDown();
            release.await();
            now.set(now.get().plusSeconds(3));
            return call.callRealMethod();
        }).when(admin).stats();
        ExecutorService pages = Executors.newFixedThreadPool(4);
        try {
            Future<DashboardOverview> first = pages.submit(() -> reads.overview(writes, false));
            reading.await();
            List<Future<DashboardOverview>> waiting = new ArrayList<>();
            for (int page = 0; page < 3; page++) {
                waiting.add(pages.submit(() -> reads.overview(writes, false)));
            }
            Thread.sleep(200);
            release.countDown();
            for (Future<DashboardOverview> page : waiting) {
                assertThat(page.get().now()).isEqualTo(first.get().now());
            }
        } finally {
            pages.shutdownNow();
        }
        verify(admin, times(1)).stats();
    }
}

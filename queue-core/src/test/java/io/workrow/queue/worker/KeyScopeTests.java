package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.JobRequest;
import io.workrow.queue.KeyScope;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@code KeyScope}: an idempotency key holds while its job waits, while it has not ended, or while
 * it is kept; past its scope the key makes a new job, which takes it over. Under producers racing
 * for one key while workers start and end its jobs, never two jobs within the scope at once.
 */
class KeyScopeTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private WorkerRuntime runtime;

    record Refresh(int n) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.stop();
        }
    }

    private long enqueue(KeyScope scope, int n) {
        return jobQueue.enqueue(JobRequest.of("refresh", new Refresh(n)).idempotencyKey("account-7", scope));
    }

    private ClaimedPosition claim() {
        List<ClaimedPosition> claimed = database.store().claims().claim("refresh", "test", 1, Duration.ofMinutes(1),
                false);
        assertThat(claimed).hasSize(1);
        return claimed.get(0);
    }

    private void complete(ClaimedPosition job) {
        database.store().claims().endMany(List.of(PositionEnd.completed(job)));
    }

    @Test
    void whileRetainedTheKeyHoldsAfterItsJobCompleted() {
        long first = enqueue(KeyScope.WHILE_RETAINED, 1);
        complete(claim());

        assertThat(enqueue(KeyScope.WHILE_RETAINED, 2)).isEqualTo(first);
        assertThat(jobQueue.enqueue(JobRequest.of("refresh", new Refresh(3)).idempotencyKey("account-7")))
                .as("the default").isEqualTo(first);
    }

    @Test
    void whileWaitingTheKeyIsFreeOnceItsJobStarted() {
        long first = enqueue(KeyScope.WHILE_WAITING, 1);
        assertThat(enqueue(KeyScope.WHILE_WAITING, 2)).as("still waiting").isEqualTo(first);

        ClaimedPosition running = claim();
        long second = enqueue(KeyScope.WHILE_WAITING, 3);
        assertThat(second).as("its job started: a new job").isNotEqualTo(first);
        assertThat(enqueue(KeyScope.WHILE_WAITING, 4)).as("the new job waits").isEqualTo(second);
        complete(running);

        assertThat(database.jdbc().queryForObject("SELECT job_id FROM workrow_job_key WHERE idempotency_key = ?",
                Long.class, "account-7")).isEqualTo(second);
        assertThat(database.jdbc().queryForObject("SELECT payload ->> 'n' FROM workrow_job WHERE id = ?",
                String.class, second)).as("the first request that found the key free").isEqualTo("3");
    }

    @Test
    void whileActiveTheKeyHoldsWhileItsJobRunsAndIsFreeOnceItEnded() {
        long first = enqueue(KeyScope.WHILE_ACTIVE, 1);
        ClaimedPosition running = claim();
        assertThat(enqueue(KeyScope.WHILE_ACTIVE, 2)).as("running").isEqualTo(first);

        complete(running);
        long second = enqueue(KeyScope.WHILE_ACTIVE, 3);
        assertThat(second).as("ended: a new job").isNotEqualTo(first);

        database.store().claims().endMany(List.of(PositionEnd.discarded(claim(), "gone")));
        long third = enqueue(KeyScope.WHILE_ACTIVE, 4);
        assertThat(third).as("dead is ended").isNotEqualTo(second);
        assertThat(enqueue(KeyScope.WHILE_RETAINED, 5)).as("a retained enqueue never moves the key")
                .isEqualTo(third);
    }

    @Test
    void producersRacingForOneKeyWhileWorkersStartItsJobsNeverMakeTwoWaitingJobs() throws Exception {
        raceFor(KeyScope.WHILE_WAITING, "'pending', 'scheduled', 'waiting'");
    }

    @Test
    void producersRacingForOneKeyWhileWorkersRunItsJobsNeverMakeTwoActiveJobs() throws Exception {
        raceFor(KeyScope.WHILE_ACTIVE, "'pending', 'scheduled', 'waiting', 'running'");
    }

    private long replace(int n, Duration delay) {
        return jobQueue.enqueue(JobRequest.of("refresh", new Refresh(n)).idempotencyKey("account-7").delay(delay)
                .replaceWaiting());
    }

    private String payloadOf(long id) {
        return database.jdbc().queryForObject("SELECT payload ->> 'n' FROM workrow_job WHERE id = ?", String.class, id);
    }

    private String statusOf(long id) {
        return database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, id);
    }

    @Test
    void replaceWaitingReplacesTheWaitingJobsPayloadAndDueTimeAndMakesANewJobOnceItStarted() {
        long first = replace(1, Duration.ofHours(1));
        assertThat(statusOf(first)).isEqualTo("scheduled");

        assertThat(replace(2, Duration.ZERO)).isEqualTo(first);
        assertThat(payloadOf(first)).isEqualTo("2");
        assertThat(statusOf(first)).as("due now").isEqualTo("pending");
        assertThat(replace(3, Duration.ofHours(2))).isEqualTo(first);
        assertThat(statusOf(first)).as("due later again").isEqualTo("scheduled");
        database.jdbc().update("UPDATE workrow_scheduled SET run_at = now()");
        database.store().promoteScheduled(100);

        ClaimedPosition running = claim();
        assertThat(running.payloadJson()).contains("3");
        long second = replace(4, Duration.ZERO);
        assertThat(second).as("the first started: a new job takes the key").isNotEqualTo(first);
        assertThat(payloadOf(second)).isEqualTo("4");
        assertThat(payloadOf(first)).as("the running job keeps its payload").isEqualTo("3");
        complete(running);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> jobQueue.enqueue(JobRequest.of("refresh",
                new Refresh(5)).replaceWaiting())).hasMessageContaining("needs an idempotency key");
    }

    @Test
    void aStartedJobBackForARetryNeitherHoldsAWaitingKeyNorIsReplaced() {
        long first = enqueue(KeyScope.WHILE_WAITING, 1);
        database.store().claims().endMany(List.of(PositionEnd.failed(claim(), "partner down", Duration.ZERO)));
        assertThat(statusOf(first)).as("back for its retry").isEqualTo("pending");

        long second = enqueue(KeyScope.WHILE_WAITING, 2);
        assertThat(second).as("the first started once: the key made a new job").isNotEqualTo(first);
        assertThat(replace(3, Duration.ZERO)).as("the new job never started: replaced").isEqualTo(second);
        assertThat(payloadOf(second)).isEqualTo("3");

        // The key's job now starts and comes back for a retry: a replacement makes a new job.
        database.jdbc().update("UPDATE workrow_ready SET priority = -1 WHERE id = ?", second);
        ClaimedPosition secondRunning = claim();
        assertThat(secondRunning.id()).isEqualTo(second);
        database.store().claims().endMany(List.of(PositionEnd.failed(secondRunning, "partner down", Duration.ZERO)));
        long third = replace(4, Duration.ZERO);
        assertThat(third).isNotIn(first, second);
        assertThat(payloadOf(second)).as("a retry keeps the payload it started with").isEqualTo("3");
    }

    @Test
    void aReplacementAlsoMovesTheDeadlineAndCannotWaitForOtherJobs() {
        long first = jobQueue.enqueue(JobRequest.of("refresh", new Refresh(1)).idempotencyKey("account-7")
                .delay(Duration.ofMinutes(1)).expiresAt(java.time.Instant.now().plusSeconds(120)).replaceWaiting());
        java.time.Instant later = java.time.Instant.now().plus(Duration.ofHours(2));
        assertThat(jobQueue.enqueue(JobRequest.of("refresh", new Refresh(2)).idempotencyKey("account-7")
                .delay(Duration.ofHours(1)).expiresAt(later).replaceWaiting())).isEqualTo(first);
        assertThat(database.jdbc().queryForObject("SELECT expires_at FROM workrow_job_data WHERE id = ?",
                java.sql.Timestamp.class, first).toInstant())
                .isCloseTo(later, org.assertj.core.api.Assertions.within(1, java.time.temporal.ChronoUnit.MILLIS));

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> jobQueue.enqueue(JobRequest.of("refresh",
                new Refresh(3)).idempotencyKey("account-7").after(first).replaceWaiting()))
                .hasMessageContaining("cannot wait for other jobs");
    }

    @Test
    void noEnqueueOutsideABatchFreesOrReplacesAMembersKey() {
        io.workrow.queue.BatchReceipt batch = jobQueue.batch()
                .add(JobRequest.of("refresh", new Refresh(1)).idempotencyKey("account-7")).enqueue();
        long member = batch.jobIds().get(0);
        assertThat(replace(2, Duration.ZERO)).isEqualTo(member);
        assertThat(payloadOf(member)).as("a member's payload is its batch's").isEqualTo("1");

        complete(claim());
        assertThat(enqueue(KeyScope.WHILE_ACTIVE, 3)).as("its key stays with the member").isEqualTo(member);
    }

    @Test
    void replaceWaitingOnAJobWaitingForOthersKeepsItWaiting() {
        long dependency = jobQueue.enqueue(JobRequest.of("refresh", new Refresh(0)).delay(Duration.ofHours(1)));
        long waiter = jobQueue.enqueue(JobRequest.of("refresh", new Refresh(1)).idempotencyKey("account-7")
                .after(dependency));

        assertThat(replace(2, Duration.ofMinutes(5))).isEqualTo(waiter);

        assertThat(statusOf(waiter)).isEqualTo("waiting");
        assertThat(payloadOf(waiter)).isEqualTo("2");
    }

    @Test
    void racingReplacementsAreNeverLostAndNeverMakeTwoWaitingJobs() throws Exception {
        // (job id, n, when): the time is read in the enqueue's transaction, which holds the key's row
        // (or the job's row) locked from its replacement to its commit, so of one job's replacements
        // the latest is last.
        List<Object[]> enqueued = java.util.Collections.synchronizedList(new ArrayList<>());
        int most = race("'pending', 'scheduled', 'waiting'", n -> {
            long id = replace(n, Duration.ZERO);
            enqueued.add(new Object[] {id, n, database.jdbc().queryForObject("SELECT clock_timestamp()",
                    java.sql.Timestamp.class)});
        });
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> database.jdbc().queryForObject(
                "SELECT count(*) FROM workrow_job WHERE idempotency_key = 'account-7' AND status <> 'completed'",
                Integer.class) == 0);

        assertThat(most).as("never two waiting jobs of the key").isLessThanOrEqualTo(1);
        java.util.Map<Long, Object[]> latest = new java.util.HashMap<>();
        synchronized (enqueued) {
            for (Object[] row : enqueued) {
                latest.merge((Long) row[0], row, (a, b) -> ((java.sql.Timestamp) a[2]).after((java.sql.Timestamp) b[2])
                        ? a : b);
            }
        }
        assertThat(latest.size()).as("jobs started and new ones took the key").isGreaterThan(1);
        latest.forEach((id, row) -> assertThat(payloadOf(id)).as("job %d ran with its latest replacement: %s", id,
                enqueued.stream().filter(r -> r[0].equals(id)).map(r -> r[1] + "@" + r[2]).toList())
                .isEqualTo(Integer.toString((Integer) row[1])));
    }

    private void raceFor(KeyScope scope, String statuses) throws Exception {
        int most = race(statuses, n -> enqueue(scope, n));

        assertThat(most).as("never two jobs of the key within " + scope).isLessThanOrEqualTo(1);
        int jobs = database.jdbc().queryForObject("SELECT count(*) FROM workrow_job WHERE idempotency_key = 'account-7'",
                Integer.class);
        assertThat(jobs).as("the key moved on as its jobs " + (scope == KeyScope.WHILE_WAITING ? "started" : "ended"))
                .isGreaterThan(1).isLessThan(600);
    }

    /**
     * Four producers run {@code enqueue} with numbers of their own, each in a transaction of its
     * own, 150 times each, while a runtime runs the key's jobs (3 ms each); a sampler counts the
     * key's jobs in {@code statuses} meanwhile. Returns the most it counted at once.
     */
    private int race(String statuses, java.util.function.IntConsumer enqueue) throws Exception {
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("refresh", Refresh.class, (refresh, job) -> Thread.sleep(3), QueueOptions.defaults())
                .build();
        runtime.start();
        TransactionTemplate transaction = new TransactionTemplate(
                new org.springframework.jdbc.datasource.DataSourceTransactionManager(database.dataSource()));
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicInteger mostWithin = new AtomicInteger();
        AtomicInteger samples = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(5);
        try {
            Future<?> sampler = threads.submit(() -> {
                while (producing.get()) {
                    Integer within = database.jdbc().queryForObject("SELECT count(*) FROM workrow_job"
                            + " WHERE idempotency_key = 'account-7' AND status IN (" + statuses + ")", Integer.class);
                    mostWithin.accumulateAndGet(within, Math::max);
                    samples.incrementAndGet();
                }
                return null;
            });
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                int producer = p;
                producers.add(threads.submit(() -> {
                    for (int i = 0; i < 150; i++) {
                        int n = producer * 1000 + i;
                        transaction.executeWithoutResult(status -> enqueue.accept(n));
                    }
                    return null;
                }));
            }
            for (Future<?> producer : producers) {
                producer.get(60, TimeUnit.SECONDS);
            }
            producing.set(false);
            sampler.get(10, TimeUnit.SECONDS);
        } finally {
            producing.set(false);
            threads.shutdownNow();
        }
        assertThat(samples.get()).as("sampled while racing").isGreaterThan(20);
        return mostWithin.get();
    }
}

package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.BatchReceipt;
import io.workrow.queue.BatchStatus;
import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Batches ({@code JobQueue.batch()}): callbacks held until every member has ended, released once,
 * onSuccess only when every member completed; counted by one row, whatever ends the members
 * (ends, retries from dead, cancels, cascades); the last members ending on three nodes at once
 * still release the callbacks exactly once.
 */
class JobBatchTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private WorkerRuntime runtime;

    record Mail(String to, String kind) {
    }

    record Campaign(long id) {
    }

    @BeforeEach
    void cleanUp() {
        database.deleteAllJobs();
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (runtime != null) {
            runtime.stop();
        }
        threads.shutdownNow();
        threads.awaitTermination(10, TimeUnit.SECONDS);
        pools.forEach(HikariDataSource::close);
    }

    private WorkerRuntime runtime() {
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler("mail", Mail.class, (mail, job) -> {
                    ran.add(mail.to() + " in " + job.batchId());
                    if (mail.kind().equals("discard")) {
                        throw new DiscardJobException("no such mailbox");
                    }
                }, QueueOptions.defaults())
                .handler("campaign", String.class, (kind, job) -> ran.add(kind + " of " + job.batchId()),
                        QueueOptions.defaults())
                .build();
        return runtime;
    }

    private List<JobRequest> mails(String... kinds) {
        return IntStream.range(0, kinds.length).mapToObj(i -> JobRequest.of("mail", new Mail("m" + i, kinds[i])))
                .toList();
    }

    private BatchReceipt campaign(List<JobRequest> members) {
        return jobQueue.batch().addAll(members).onSuccess(JobRequest.of("campaign", "sent"))
                .onFinish(JobRequest.of("campaign", "report")).enqueue();
    }

    private BatchStatus status(long batch) {
        return database.store().findBatch(batch).orElseThrow();
    }

    private JobStatus statusOf(long id) {
        return JobStatus.fromColumn(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?",
                String.class, id));
    }

    @Test
    void theCallbacksWaitForEveryMemberAndRunOnceKnowingTheirBatch() {
        BatchReceipt batch = campaign(mails("ok", "ok", "ok"));
        BatchStatus opened = status(batch.batchId());
        assertThat(batch.jobIds()).hasSize(3);
        assertThat(opened.total()).isEqualTo(3);
        assertThat(opened.counts()).containsExactly(Map.entry(JobStatus.PENDING, 3L));
        assertThat(statusOf(opened.onSuccessId())).isEqualTo(JobStatus.WAITING);
        assertThat(statusOf(opened.onFinishId())).isEqualTo(JobStatus.WAITING);

        WorkerRuntime runtime = runtime();
        assertThat(runtime.drain("campaign")).as("held while members are open").isEmpty();
        runtime.drain("mail");
        runtime.drain("campaign");

        OptionalLong id = OptionalLong.of(batch.batchId());
        assertThat(ran).containsExactlyInAnyOrder("m0 in " + id, "m1 in " + id, "m2 in " + id, "sent of " + id,
                "report of " + id);
        BatchStatus done = status(batch.batchId());
        assertThat(done.finished()).isTrue();
        assertThat(done.counts()).containsExactly(Map.entry(JobStatus.COMPLETED, 3L));
    }

    @Test
    void aMemberThatDiesCancelsOnSuccessNamingTheCountsAndOnFinishStillRuns() {
        BatchReceipt batch = campaign(mails("ok", "discard"));
        runtime().drain("mail");

        BatchStatus done = status(batch.batchId());
        assertThat(done.counts()).containsOnly(Map.entry(JobStatus.COMPLETED, 1L), Map.entry(JobStatus.DEAD, 1L));
        assertThat(statusOf(done.onSuccessId())).isEqualTo(JobStatus.CANCELLED);
        assertThat(database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class,
                done.onSuccessId())).isEqualTo("batch " + batch.batchId() + " ended with 1 dead, 0 cancelled");
        assertThat(statusOf(done.onFinishId())).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void aDeadMemberRetriedAfterTheBatchFinishedRecountsItAndReleasesNothingAgain() {
        BatchReceipt batch = campaign(mails("discard"));
        WorkerRuntime runtime = runtime();
        runtime.drain("mail");
        runtime.drain("campaign");
        long member = batch.jobIds().get(0);
        database.rows().setPayload(member, "{\"to\":\"m0\",\"kind\":\"ok\"}");

        assertThat(database.store().retryDead(List.of(member), null, null, null)).isOne();
        assertThat(status(batch.batchId()).counts()).containsExactly(Map.entry(JobStatus.PENDING, 1L));
        runtime.drain("mail");

        assertThat(status(batch.batchId()).counts()).containsExactly(Map.entry(JobStatus.COMPLETED, 1L));
        assertThat(runtime.drain("campaign")).as("the callbacks ran once, at the batch's end").isEmpty();
        assertThat(ran).filteredOn(run -> run.startsWith("report")).hasSize(1);
    }

    @Test
    void anEmptyBatchAndABatchOfMembersBornCancelledFinishAtOnce() {
        BatchReceipt empty = campaign(List.of());
        long dead = jobQueue.enqueue(JobRequest.of("mail", new Mail("x", "discard")));
        runtime().drain("mail");
        BatchReceipt doomed = campaign(List.of(JobRequest.of("mail", new Mail("y", "ok")).after(dead)));

        assertThat(status(empty.batchId()).finished()).isTrue();
        assertThat(statusOf(status(empty.batchId()).onSuccessId())).isEqualTo(JobStatus.PENDING);
        BatchStatus cancelled = status(doomed.batchId());
        assertThat(cancelled.finished()).isTrue();
        assertThat(cancelled.counts()).containsExactly(Map.entry(JobStatus.CANCELLED, 1L));
        assertThat(statusOf(cancelled.onSuccessId())).isEqualTo(JobStatus.CANCELLED);
        assertThat(statusOf(cancelled.onFinishId())).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void aMemberWhoseKeyIsTakenIsNotInTheBatch() {
        long existing = jobQueue.enqueue(JobRequest.of("mail", new Mail("a", "ok")).idempotencyKey("mail-a"));
        BatchReceipt batch = campaign(List.of(JobRequest.of("mail", new Mail("a", "ok")).idempotencyKey("mail-a"),
                JobRequest.of("mail", new Mail("b", "ok")).idempotencyKey("mail-b")));

        assertThat(batch.jobIds()).hasSize(1).doesNotContain(existing);
        assertThat(status(batch.batchId()).total()).isOne();
    }

    @Test
    void cancellingAMemberCountsItAndABatchRolledBackWithItsTransactionLeavesNothing() {
        BatchReceipt batch = campaign(mails("ok", "ok"));
        assertThat(database.store().cancel("mail", batch.jobIds().get(0))).isTrue();
        assertThat(status(batch.batchId()).counts()).containsOnly(Map.entry(JobStatus.CANCELLED, 1L),
                Map.entry(JobStatus.PENDING, 1L));

        int jobs = database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class);
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(
                database.dataSource()));
        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            campaign(mails("ok", "ok", "ok"));
            throw new IllegalStateException("the order failed");
        })).hasMessage("the order failed");
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isEqualTo(jobs);
    }

    @Test
    void aMemberIsCountedOnceWhenADependentRegisteredAtCommitOrADeleteSettlesItAgain() {
        BatchReceipt batch = jobQueue.batch().addAll(mails("ok", "ok", "ok")).onFinish(JobRequest.of("campaign", "report"))
                .enqueue();
        ClaimedPosition first = database.store().claims().claim("mail", "w", 1, Duration.ofMinutes(5), false).get(0);
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(
                database.dataSource()));
        transactions.executeWithoutResult(status -> {
            jobQueue.enqueue(JobRequest.of("campaign", "after the first").after(first.id()));
            // The member ends, and is counted, before this enqueue commits and registers its dependent.
            Thread ender = new Thread(() -> database.store().claims().endMany(List.of(PositionEnd.completed(first))));
            ender.start();
            try {
                ender.join();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(status(batch.batchId()).counts()).containsEntry(JobStatus.COMPLETED, 1L);

        database.jdbc().update("DELETE FROM workrow_job WHERE id = ?", first.id());
        assertThat(status(batch.batchId()).counts()).as("a finished member deleted was counted already")
                .containsOnly(Map.entry(JobStatus.COMPLETED, 1L), Map.entry(JobStatus.PENDING, 2L));
        assertThat(status(batch.batchId()).finished()).isFalse();

        database.jdbc().update("DELETE FROM workrow_job WHERE id = ?", batch.jobIds().get(1));
        assertThat(status(batch.batchId()).counts()).as("a pending member deleted counts as cancelled")
                .containsOnly(Map.entry(JobStatus.COMPLETED, 1L), Map.entry(JobStatus.CANCELLED, 1L),
                        Map.entry(JobStatus.PENDING, 1L));
    }

    @Test
    void retryingACallbackFromDeadLeavesTheCountersAlone() {
        BatchReceipt batch = jobQueue.batch().addAll(mails("ok")).onFinish(JobRequest.of("campaign", "report"))
                .enqueue();
        WorkerRuntime runtime = runtime();
        runtime.drain("mail");
        long callback = status(batch.batchId()).onFinishId();
        database.rows().killWaiting(callback, "boom");

        assertThat(database.store().retryDead(List.of(callback), null, null, null)).isOne();
        assertThat(database.store().cancelDead(List.of(callback), null, null)).isZero();

        assertThat(status(batch.batchId()).counts()).containsExactly(Map.entry(JobStatus.COMPLETED, 1L));
    }

    @Test
    void aSettlingEndThatWaitsTooLongForALockIsSentAgainWhileTheLeanEndsOfTheCallStand() throws Exception {
        BatchReceipt batch = jobQueue.batch().addAll(mails("ok")).onFinish(JobRequest.of("campaign", "report"))
                .enqueue();
        long plain = jobQueue.enqueue(JobRequest.of("mail", new Mail("plain", "ok")));
        List<ClaimedPosition> held = database.store().claims().claim("mail", "w", 2, Duration.ofMinutes(5), false);
        assertThat(held).hasSize(2);
        try (java.sql.Connection operator = database.dataSource().getConnection()) {
            operator.setAutoCommit(false);
            operator.createStatement().execute("SELECT 1 FROM workrow_batch WHERE id = " + batch.batchId()
                    + " FOR UPDATE");

            Map<PositionEnd, io.workrow.queue.store.EndResult> results = database.store().claims()
                    .endMany(held.stream().map(PositionEnd::completed).toList());

            assertThat(results).hasSize(2).allSatisfy((end, result) -> assertThat(result.verdict()).isEqualTo(
                    end.id() == plain ? io.workrow.queue.store.EndResult.Verdict.ACCEPTED
                            : io.workrow.queue.store.EndResult.Verdict.BUSY));
            operator.rollback();
        }
        assertThat(statusOf(plain)).isEqualTo(JobStatus.COMPLETED);
        assertThat(statusOf(batch.jobIds().get(0))).as("rolled back whole, to be sent again")
                .isEqualTo(JobStatus.RUNNING);
        ClaimedPosition member = held.stream().filter(job -> job.id() != plain).findFirst().orElseThrow();
        assertThat(database.store().claims().endMany(List.of(PositionEnd.completed(member))).values())
                .extracting(io.workrow.queue.store.EndResult::verdict)
                .containsExactly(io.workrow.queue.store.EndResult.Verdict.ACCEPTED);
        assertThat(status(batch.batchId()).finished()).isTrue();
    }

    @Test
    void aCallbackThatWaitsForOtherJobsIsRefused() {
        long other = jobQueue.enqueue(JobRequest.of("mail", new Mail("a", "ok")));
        assertThatThrownBy(() -> jobQueue.batch().onFinish(JobRequest.of("campaign", "report").after(other)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waits for its batch alone");
    }

    @Test
    void theLastMembersEndingOnThreeNodesAtOnceReleaseTheCallbacksOnce() throws Exception {
        List<JobStore> nodes = List.of(node(), node(), node());
        for (int round = 0; round < 40; round++) {
            BatchReceipt batch = campaign(mails("ok", "ok", "ok", "ok", "ok", "ok"));
            List<List<ClaimedPosition>> held = new ArrayList<>();
            for (JobStore node : nodes) {
                held.add(node.claims().claim("mail", "w", 2, Duration.ofMinutes(5), false));
            }
            CyclicBarrier together = new CyclicBarrier(3);
            List<Future<?>> ends = new ArrayList<>();
            for (int n = 0; n < 3; n++) {
                JobStore node = nodes.get(n);
                List<ClaimedPosition> mine = held.get(n);
                assertThat(mine).hasSize(2);
                ends.add(threads.submit(() -> {
                    together.await();
                    return node.claims().endMany(mine.stream().map(PositionEnd::completed).toList());
                }));
            }
            for (Future<?> end : ends) {
                end.get(10, TimeUnit.SECONDS);
            }
            BatchStatus done = status(batch.batchId());
            assertThat(done.counts()).as("round %d", round).containsExactly(Map.entry(JobStatus.COMPLETED, 6L));
            assertThat(done.finished()).isTrue();
            assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_ready WHERE id IN (?, ?)",
                    Integer.class, done.onSuccessId(), done.onFinishId())).as("each callback released once").isEqualTo(2);
            database.jdbc().update("DELETE FROM workrow_job WHERE queue = 'campaign'");
        }
    }

    private JobStore node() {
        JobStore node = database.otherNode(4);
        pools.add((HikariDataSource) node.dataSource());
        return node;
    }
}

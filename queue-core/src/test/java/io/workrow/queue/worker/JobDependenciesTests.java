package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.workrow.queue.DiscardJobException;
import io.workrow.queue.JobFunction;
import io.workrow.queue.JobRequest;
import io.workrow.queue.JobStatus;
import io.workrow.queue.QueueStats;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.EndResult;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.store.RecoveryRule;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Jobs that wait for other jobs ({@code JobRequest.after}, {@code afterSettled}) on one runtime:
 * they wait as {@code waiting}, are released by the end of their last dependency, cancelled (and
 * their own dependents after them) by a dependency that ends dead or cancelled, and handed the
 * results of the jobs they waited for. The races between nodes are {@link JobDependencyRaceTests}.
 */
class JobDependenciesTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final RecoveryRule NO_BACKOFF = new RecoveryRule("", 0, 1.0, 0, 0, 0);

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private WorkerRuntime runtime;

    record Fetch(String currency, String kind) {
    }

    record Rate(String currency, double value) {
    }

    record Build(String day) {
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

    /** {@code fetch-rate} returns a rate, or fails for good when the kind says so; {@code build-report} records its dependencies' results. */
    private WorkerRuntime runtime() {
        JobFunction<Fetch, Rate> fetch = (request, job) -> {
            ran.add(request.currency());
            if (request.kind().equals("discard")) {
                throw new DiscardJobException("no rate for " + request.currency());
            }
            return new Rate(request.currency(), request.currency().length() / 2.0);
        };
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .function("fetch-rate", Fetch.class, fetch, QueueOptions.defaults())
                .handler("build-report", Build.class, (build, job) -> ran.add("report " + build.day() + " "
                        + job.dependencyResults(Rate.class)), QueueOptions.defaults())
                .build();
        return runtime;
    }

    private long fetch(String currency) {
        return jobQueue.enqueue(JobRequest.of("fetch-rate", new Fetch(currency, "ok")));
    }

    private JobStatus statusOf(long id) {
        return JobStatus.fromColumn(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?",
                String.class, id));
    }

    private String lastError(long id) {
        return database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class, id);
    }

    private int depsLeft(long id) {
        return database.jdbc().queryForObject("SELECT deps_left FROM workrow_waiting WHERE id = ?", Integer.class, id);
    }

    private int edges() {
        return database.jdbc().queryForObject("SELECT count(*) FROM workrow_dependency", Integer.class);
    }

    @Test
    void aJobWaitsForEveryDependencyThenRunsWithTheirResultsInTheOrderNamed() {
        long eur = fetch("EUR");
        long usd = fetch("USD");
        long report = jobQueue.enqueue(JobRequest.of("build-report", new Build("2026-11-27")).after(usd, eur));

        assertThat(statusOf(report)).isEqualTo(JobStatus.WAITING);
        assertThat(depsLeft(report)).isEqualTo(2);
        WorkerRuntime runtime = runtime();
        assertThat(runtime.drain("build-report")).as("not claimable while it waits").isEmpty();

        database.jdbc().update("UPDATE workrow_ready SET run_at = now() + interval '1 hour' WHERE id = ?", usd);
        runtime.drain("fetch-rate");
        assertThat(statusOf(report)).as("one of two ended").isEqualTo(JobStatus.WAITING);
        assertThat(depsLeft(report)).isOne();

        database.jdbc().update("UPDATE workrow_ready SET run_at = now() WHERE id = ?", usd);
        runtime.drain("fetch-rate");
        assertThat(statusOf(report)).isEqualTo(JobStatus.PENDING);
        assertThat(runtime.drain("build-report")).singleElement().satisfies(run -> assertThat(run.succeeded()).isTrue());
        assertThat(ran).last().isEqualTo("report 2026-11-27 {" + usd + "=Rate[currency=USD, value=1.5], " + eur
                + "=Rate[currency=EUR, value=1.5]}");
        assertThat(edges()).isZero();
        Long[] afterIds = database.jdbc().queryForObject("SELECT after_ids FROM workrow_job_data WHERE id = ?",
                (rs, row) -> (Long[]) rs.getArray(1).getArray(), report);
        assertThat(afterIds).containsExactly(usd, eur);
    }

    @Test
    void aCompletedDependencyCountsAsMetAndADeadOneCancelsAtEnqueue() {
        long done = fetch("EUR");
        long failed = jobQueue.enqueue(JobRequest.of("fetch-rate", new Fetch("XXX", "discard")));
        runtime().drain("fetch-rate");

        long ready = jobQueue.enqueue(JobRequest.of("build-report", new Build("d1")).after(done));
        long cancelled = jobQueue.enqueue(JobRequest.of("build-report", new Build("d2")).after(done, failed));
        long settled = jobQueue.enqueue(JobRequest.of("build-report", new Build("d3")).afterSettled(failed));

        assertThat(statusOf(ready)).isEqualTo(JobStatus.PENDING);
        assertThat(statusOf(cancelled)).isEqualTo(JobStatus.CANCELLED);
        assertThat(lastError(cancelled)).isEqualTo("dependency " + failed + " is dead");
        assertThat(statusOf(settled)).isEqualTo(JobStatus.PENDING);
        assertThat(edges()).isZero();
    }

    @Test
    void anUnknownDependencyFailsTheEnqueueNamingItAndEnqueuesNothing() {
        long known = fetch("EUR");
        int before = database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class);

        assertThatThrownBy(() -> jobQueue.enqueueAll(List.of(JobRequest.of("fetch-rate", new Fetch("GBP", "ok")),
                JobRequest.of("build-report", new Build("d")).after(known, 987_654_321L))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no job 987654321 in schema public");

        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_job", Integer.class)).isEqualTo(before);
    }

    @Test
    void aDependencyWhoseHistoryIsPastRetentionIsRefusedAsUnknownAndOneNamedTwiceWaitsAsAfter() {
        long done = fetch("EUR");
        long usd = fetch("USD");
        runtime().drain("fetch-rate");
        database.jdbc().update("DELETE FROM workrow_outcome WHERE job_id = ?", done);

        assertThatThrownBy(() -> jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(done)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no job " + done)
                .hasMessageContaining("past retention");

        long gbp = fetch("GBP");
        long both = jobQueue.enqueue(JobRequest.of("build-report", new Build("b")).after(gbp).afterSettled(gbp, usd));
        assertThat(database.jdbc().queryForObject("SELECT cardinality(after_ids) || '/' || cardinality(after_settled_ids)"
                + " FROM workrow_job_data WHERE id = ?", String.class, both)).isEqualTo("1/1");
        assertThat(database.jdbc().queryForObject("SELECT settled FROM workrow_dependency WHERE waiter_id = ?",
                Boolean.class, both)).isFalse();
    }

    @Test
    void aDeadDependencyCancelsItsAfterDependentsAndTheirsAndReleasesItsAfterSettledOnes() {
        long failing = jobQueue.enqueue(JobRequest.of("fetch-rate", new Fetch("XXX", "discard")));
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(failing));
        long chained = jobQueue.enqueue(JobRequest.of("build-report", new Build("b")).after(dependent));
        long chainedSettled = jobQueue.enqueue(JobRequest.of("build-report", new Build("c")).afterSettled(dependent));
        long settled = jobQueue.enqueue(JobRequest.of("build-report", new Build("d")).afterSettled(failing));

        runtime().drain("fetch-rate");

        assertThat(statusOf(failing)).isEqualTo(JobStatus.DEAD);
        assertThat(statusOf(dependent)).isEqualTo(JobStatus.CANCELLED);
        assertThat(lastError(dependent)).isEqualTo("dependency " + failing + " is dead");
        assertThat(statusOf(chained)).isEqualTo(JobStatus.CANCELLED);
        assertThat(lastError(chained)).isEqualTo("dependency " + dependent + " was cancelled");
        assertThat(statusOf(chainedSettled)).isEqualTo(JobStatus.PENDING);
        assertThat(statusOf(settled)).isEqualTo(JobStatus.PENDING);
        assertThat(edges()).isZero();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_waiting", Integer.class)).isZero();
    }

    @Test
    void aDependencyRetriedFromDeadLeavesItsCancelledDependentCancelled() {
        long failing = jobQueue.enqueue(JobRequest.of("fetch-rate", new Fetch("XXX", "discard")));
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(failing));
        long settled = jobQueue.enqueue(JobRequest.of("build-report", new Build("b")).afterSettled(failing));
        WorkerRuntime runtime = runtime();
        runtime.drain("fetch-rate");
        assertThat(statusOf(settled)).isEqualTo(JobStatus.PENDING);

        database.jdbc().update("UPDATE workrow_job_data SET payload = '{\"currency\":\"XXX\",\"kind\":\"ok\"}'"
                + " WHERE id = ?", failing);
        assertThat(database.store().retryDead(List.of(failing), null, null, null)).isOne();
        runtime.drain("fetch-rate");

        assertThat(statusOf(failing)).isEqualTo(JobStatus.COMPLETED);
        assertThat(statusOf(dependent)).as("enqueue it again to run it").isEqualTo(JobStatus.CANCELLED);
        assertThat(runtime.drain("build-report")).extracting(DrainedJob::id).containsExactly(settled);
    }

    @Test
    void cancellingADependencyCancelsItsDependentsAndCancellingAWaitingJobDropsItsEdges() {
        long eur = fetch("EUR");
        long usd = fetch("USD");
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur));
        long waiting = jobQueue.enqueue(JobRequest.of("build-report", new Build("b")).after(usd));

        assertThat(database.store().cancel("fetch-rate", eur)).isTrue();
        assertThat(database.store().cancel("build-report", waiting)).isTrue();

        assertThat(statusOf(dependent)).isEqualTo(JobStatus.CANCELLED);
        assertThat(lastError(dependent)).isEqualTo("dependency " + eur + " was cancelled");
        assertThat(statusOf(waiting)).isEqualTo(JobStatus.CANCELLED);
        assertThat(edges()).isZero();
        runtime().drain("fetch-rate");
        assertThat(statusOf(usd)).isEqualTo(JobStatus.COMPLETED);
    }

    @Test
    void aDependencyDeletedThroughTheViewCancelsItsDependents() {
        long eur = fetch("EUR");
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur));

        database.jdbc().update("DELETE FROM workrow_job WHERE id = ?", eur);

        assertThat(statusOf(dependent)).isEqualTo(JobStatus.CANCELLED);
        assertThat(edges()).isZero();
    }

    @Test
    void aLeaseLostByADependencyReleasesNothingAndItsSweptDeathCancelsTheDependent() {
        long once = jobQueue.enqueue(JobRequest.of("fetch-rate", new Fetch("EUR", "ok")).maxAttempts(1));
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(once));
        ClaimedPosition held = database.store().claims().claim("fetch-rate", "w1", 1, Duration.ofMinutes(1), false)
                .get(0);
        database.rows().expireLease(once);
        assertThat(database.store().sweepExpiredLeases(100, List.of(), NO_BACKOFF)).singleElement()
                .satisfies(moved -> assertThat(moved.status()).isEqualTo(JobStatus.DEAD));

        Map<PositionEnd, EndResult> late = database.store().claims().endMany(List.of(PositionEnd.completed(held)));

        assertThat(late.values()).singleElement().satisfies(result ->
                assertThat(result.verdict()).isEqualTo(EndResult.Verdict.REFUSED));
        assertThat(statusOf(dependent)).isEqualTo(JobStatus.CANCELLED);
        assertThat(lastError(dependent)).isEqualTo("dependency " + once + " is dead");
    }

    @Test
    void aResentCompletionReleasesItsDependentOnce() {
        long eur = fetch("EUR");
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur));
        ClaimedPosition held = database.store().claims().claim("fetch-rate", "w1", 1, Duration.ofMinutes(1), false)
                .get(0);

        assertThat(database.store().claims().endMany(List.of(PositionEnd.completed(held))).values())
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED);
        assertThat(database.store().claims().endMany(List.of(PositionEnd.completed(held))).values())
                .extracting(EndResult::verdict).containsExactly(EndResult.Verdict.ACCEPTED_BEFORE);

        assertThat(statusOf(dependent)).isEqualTo(JobStatus.PENDING);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_ready WHERE id = ?", Integer.class,
                dependent)).isOne();
    }

    @Test
    void aFailedAttemptKeepsItsDependentWaitingAndTheRetryCarriesTheFlag() {
        long eur = fetch("EUR");
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur));
        ClaimedPosition held = database.store().claims().claim("fetch-rate", "w1", 1, Duration.ofMinutes(1), false)
                .get(0);

        database.store().claims().endMany(List.of(PositionEnd.failed(held, "boom", Duration.ZERO)));

        assertThat(statusOf(eur)).isEqualTo(JobStatus.PENDING);
        assertThat(database.jdbc().queryForObject("SELECT waited_on FROM workrow_ready WHERE id = ?", Boolean.class,
                eur)).isTrue();
        assertThat(statusOf(dependent)).isEqualTo(JobStatus.WAITING);
        runtime().drain("fetch-rate");
        assertThat(statusOf(dependent)).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void aTransactionalDependencyReleasesItsDependentWhenItsTransactionCommits() {
        HandlerTransaction inTransaction = LocalTransactions.on(database.dataSource());
        long eur = fetch("EUR");
        long dependent = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur));
        runtime = WorkerRuntime.builder(database.dataSource()).store(database.store())
                .handler(new HandlerRegistration("fetch-rate", Fetch.class, (fetch, job) -> new Rate("EUR", 1.0),
                        QueueOptions.defaults(), inTransaction, "rates.fetch(Fetch)"))
                .build();

        runtime.drain("fetch-rate");

        assertThat(statusOf(dependent)).isEqualTo(JobStatus.PENDING);
        assertThat(jobQueue.result(eur, Rate.class)).contains(new Rate("EUR", 1.0));
    }

    @Test
    void aDependencyEnqueuedInTheSameTransactionIsWaitedFor() {
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(
                database.dataSource()));
        long[] ids = transactions.execute(status -> {
            long eur = fetch("EUR");
            long report = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur));
            return new long[] {eur, report};
        });

        assertThat(statusOf(ids[1])).isEqualTo(JobStatus.WAITING);
        runtime().drain("fetch-rate");
        assertThat(statusOf(ids[1])).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void theAdminListsWaitingJobsAndBothSidesOfAJobsDependencies() {
        long eur = fetch("EUR");
        long usd = fetch("USD");
        long report = jobQueue.enqueue(JobRequest.of("build-report", new Build("a")).after(eur).afterSettled(usd));
        long other = jobQueue.enqueue(JobRequest.of("build-report", new Build("b")).after(eur));
        runtime().drain("fetch-rate");
        database.jdbc().update("UPDATE workrow_ready SET run_at = now() + interval '1 hour'");
        long late = fetch("GBP");
        long waiting = jobQueue.enqueue(JobRequest.of("build-report", new Build("c")).after(late));
        io.workrow.queue.client.JdbcQueueAdmin admin = new io.workrow.queue.client.JdbcQueueAdmin(database.store());

        assertThat(admin.waitingJobs("build-report", 10)).extracting(io.workrow.queue.JobSummary::id)
                .containsExactly(waiting);
        assertThat(admin.dependencies(report)).get().satisfies(dependencies -> {
            assertThat(dependencies.waitsFor()).containsExactly(
                    new io.workrow.queue.JobDependencies.Link(eur, "fetch-rate", JobStatus.COMPLETED, false),
                    new io.workrow.queue.JobDependencies.Link(usd, "fetch-rate", JobStatus.COMPLETED, true));
            assertThat(dependencies.waitedOnBy()).isEmpty();
        });
        assertThat(admin.dependencies(late)).get().satisfies(dependencies -> {
            assertThat(dependencies.waitsFor()).isEmpty();
            assertThat(dependencies.waitedOnBy()).containsExactly(
                    new io.workrow.queue.JobDependencies.Link(waiting, "build-report", JobStatus.WAITING, false));
            assertThat(dependencies.waitedOnByCount()).isOne();
        });
        assertThat(admin.dependencies(other)).isPresent();
        assertThat(admin.dependencies(Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void waitingJobsAreCountedPerQueue() {
        long eur = fetch("EUR");
        jobQueue.enqueueAll(List.of(JobRequest.of("build-report", new Build("a")).after(eur),
                JobRequest.of("build-report", new Build("b")).afterSettled(eur)));

        assertThat(database.store().queueStats()).filteredOn(stats -> stats.queue().equals("build-report"))
                .singleElement().extracting(QueueStats::waiting).isEqualTo(2L);
        assertThat(database.jdbc().queryForObject("SELECT waiting FROM workrow_queue_stats WHERE queue = 'build-report'",
                Long.class)).isEqualTo(2L);
    }
}

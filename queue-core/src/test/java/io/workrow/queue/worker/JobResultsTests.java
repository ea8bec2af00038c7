package io.workrow.queue.worker;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.workrow.queue.JobFunction;
import io.workrow.queue.JobStatus;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * A handler's return value is its job's result: stored as JSON with the completion, read back by
 * {@code JobQueue.result}, shown by {@code workrow_job}, never logged, gone with the job's history;
 * a result that cannot be stored sends its job to {@code dead} with the reason.
 */
class JobResultsTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    /** Marks a value no log line and no error text may show. */
    private static final String SECRET = "s3cret-rate-7f2a";

    private final JdbcJobQueue jobQueue = new JdbcJobQueue(database.store(), JacksonPayloadCodec.withDefaultMapper());
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Logger workrowLog = (Logger) LoggerFactory.getLogger("io.workrow");
    private Level workrowLevel;
    private WorkerRuntime runtime;

    record Fetch(String currency) {
    }

    record Rate(String currency, double value, String note) {
    }

    /** Jackson cannot write this: reading its one property throws. */
    record Opaque(String value) {

        @Override
        public String value() {
            throw new IllegalStateException("not readable");
        }
    }

    @BeforeAll
    static void createLedger() {
        database.jdbc().execute("CREATE TABLE IF NOT EXISTS ledger (reference text PRIMARY KEY)");
    }

    @BeforeEach
    void cleanUpAndCaptureLogs() {
        database.deleteAllJobs();
        database.jdbc().execute("TRUNCATE ledger");
        workrowLevel = workrowLog.getLevel();
        workrowLog.setLevel(Level.DEBUG);
        logged.start();
        workrowLog.addAppender(logged);
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.stop();
        }
        workrowLog.detachAppender(logged);
        workrowLog.setLevel(workrowLevel);
    }

    private WorkerRuntime.Builder builder() {
        return WorkerRuntime.builder(database.dataSource()).store(database.store());
    }

    private WorkerRuntime rates(JobFunction<Fetch, ?> function) {
        runtime = builder().function("fetch-rate", Fetch.class, function, QueueOptions.defaults()).build();
        return runtime;
    }

    private JobStatus statusOf(long id) {
        return JobStatus.fromColumn(database.jdbc().queryForObject("SELECT status FROM workrow_job WHERE id = ?",
                String.class, id));
    }

    private String lastError(long id) {
        return database.jdbc().queryForObject("SELECT last_error FROM workrow_job WHERE id = ?", String.class, id);
    }

    private void assertNothingLoggedShows(String value) {
        assertThat(logged.list).isNotEmpty();
        assertThat(logged.list).allSatisfy(event -> {
            assertThat(event.getFormattedMessage()).doesNotContain(value);
            if (event.getThrowableProxy() != null) {
                assertThat(event.getThrowableProxy().getMessage()).doesNotContain(value);
            }
        });
    }

    @Test
    void aReturnedValueIsStoredWithTheCompletionAndReadBackAsItsType() {
        long eur = jobQueue.enqueue("fetch-rate", new Fetch("EUR"));
        long usd = jobQueue.enqueue("fetch-rate", new Fetch("USD"));
        assertThat(jobQueue.result(eur, Rate.class)).as("not completed yet").isEmpty();

        List<DrainedJob> runs = rates((fetch, job) -> new Rate(fetch.currency(), fetch.currency().length() * 0.5,
                SECRET)).drain("fetch-rate");

        assertThat(runs).allMatch(DrainedJob::succeeded).hasSize(2);
        assertThat(jobQueue.result(eur, Rate.class)).contains(new Rate("EUR", 1.5, SECRET));
        assertThat(jobQueue.result(usd, Rate.class)).contains(new Rate("USD", 1.5, SECRET));
        assertThat(database.jdbc().queryForObject("SELECT result ->> 'currency' FROM workrow_job WHERE id = ?",
                String.class, eur)).as("SQL sees it on workrow_job").isEqualTo("EUR");
        assertNothingLoggedShows(SECRET);
    }

    @Test
    void aHandlerWithoutAResultAndAFunctionReturningNullStoreNone() {
        long fromHandler = jobQueue.enqueue("fetch-rate", new Fetch("EUR"));
        runtime = builder().handler("fetch-rate", Fetch.class, (fetch, job) -> { }, QueueOptions.defaults()).build();
        runtime.drain("fetch-rate");
        runtime.stop();
        long fromNull = jobQueue.enqueue("fetch-rate", new Fetch("USD"));
        rates((fetch, job) -> null).drain("fetch-rate");

        assertThat(List.of(statusOf(fromHandler), statusOf(fromNull))).containsOnly(JobStatus.COMPLETED);
        assertThat(jobQueue.result(fromHandler, Rate.class)).isEmpty();
        assertThat(jobQueue.result(fromNull, Rate.class)).isEmpty();
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_outcome WHERE result IS NOT NULL",
                Integer.class)).isZero();
        assertThat(jobQueue.result(Long.MAX_VALUE, Rate.class)).as("no such job").isEmpty();
    }

    @Test
    void aResultOverTheLimitSendsItsJobToDeadNamingTheSizesAndTheProperty() {
        long id = jobQueue.enqueue("fetch-rate", new Fetch("EUR"));
        runtime = builder().maxResultBytes(100).function("fetch-rate", Fetch.class,
                (fetch, job) -> new Rate(fetch.currency(), 1.0, SECRET + "x".repeat(200)), QueueOptions.defaults())
                .build();

        List<DrainedJob> runs = runtime.drain("fetch-rate");

        assertThat(runs).singleElement().satisfies(run -> assertThat(run.status()).isEqualTo(JobStatus.DEAD));
        assertThat(statusOf(id)).as("not retried: the same run returns the same value").isEqualTo(JobStatus.DEAD);
        assertThat(lastError(id)).contains("result of 256 bytes as JSON is over the limit of 100")
                .contains("workrow.max-result-size").doesNotContain(SECRET);
        assertThat(jobQueue.result(id, Rate.class)).isEmpty();
        assertNothingLoggedShows(SECRET);
    }

    @Test
    void aResultThatCannotBeWrittenAsJsonSendsItsJobToDeadNamingItsType() {
        long id = jobQueue.enqueue("fetch-rate", new Fetch("EUR"));

        rates((fetch, job) -> new Opaque(SECRET)).drain("fetch-rate");

        assertThat(statusOf(id)).isEqualTo(JobStatus.DEAD);
        assertThat(lastError(id)).startsWith("result of type " + Opaque.class.getName()
                + " could not be written as JSON: ");
    }

    @Test
    void aTransactionalHandlersResultCommitsWithItsWritesAndOneOverTheLimitRollsThemBack() {
        HandlerTransaction inTransaction = LocalTransactions.on(database.dataSource());
        JobFunction<Object, ?> ledger = (fetch, job) -> {
            String currency = ((Fetch) fetch).currency();
            database.jdbc().update("INSERT INTO ledger VALUES (?)", currency);
            return new Rate(currency, 2.0, currency.equals("BIG") ? "y".repeat(500) : "small");
        };
        long small = jobQueue.enqueue("fetch-rate", new Fetch("EUR"));
        long big = jobQueue.enqueue("fetch-rate", new Fetch("BIG"));
        runtime = builder().maxResultBytes(200).handler(new HandlerRegistration("fetch-rate", Fetch.class, ledger,
                QueueOptions.defaults(), inTransaction, "ledger.record(Fetch)")).build();

        runtime.drain("fetch-rate");

        assertThat(jobQueue.result(small, Rate.class)).contains(new Rate("EUR", 2.0, "small"));
        assertThat(statusOf(big)).isEqualTo(JobStatus.DEAD);
        assertThat(lastError(big)).contains("over the limit of 200 (workrow.max-result-size)");
        assertThat(database.jdbc().queryForList("SELECT reference FROM ledger", String.class))
                .as("the oversized result's transaction rolled back").containsExactly("EUR");
    }

    @Test
    void aResultIsReadFromAnOlderDayAndIsGoneWhenRetentionDropsItsHistory() {
        long id = jobQueue.enqueue("fetch-rate", new Fetch("EUR"));
        rates((fetch, job) -> new Rate("EUR", 3.0, "kept")).drain("fetch-rate");
        // Ten days back: enqueued, and completed into the log's default partition (no day of its own).
        database.jdbc().update("UPDATE workrow_job_data SET created_at = now() - interval '10 days 1 hour'"
                + " WHERE id = ?", id);
        database.jdbc().update("UPDATE workrow_outcome SET finished_at = now() - interval '10 days' WHERE job_id = ?",
                id);
        assertThat(jobQueue.result(id, Rate.class)).contains(new Rate("EUR", 3.0, "kept"));

        database.store().pruneFinished(Map.of(JobStatus.COMPLETED, Duration.ofDays(7)), 100);

        assertThat(jobQueue.result(id, Rate.class)).isEmpty();
    }
}

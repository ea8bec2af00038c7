package io.workrow.queue.faults;

import io.workrow.queue.JobContext;
import io.workrow.queue.QueueHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The worker the fault suite kills, freezes and stops: a worker-only Spring Boot application on
 * the starter, in a JVM of its own. Its one handler writes both ledgers ({@link Ledgers}): the
 * invocation first, committed on its own before the work starts, then, after the work, the effect
 * in the handler's transaction, which is the one Workrow's fenced completion commits in.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class FaultWorker {

    /** The queue the suite's jobs go to. */
    public static final String QUEUE = "fault-work";
    /** A queue whose handler halts the JVM, as an out-of-memory kill does. */
    public static final String HALT_QUEUE = "fault-halt";
    /** A queue whose handler is not transactional: its completion goes through the batch writer. */
    public static final String PLAIN_QUEUE = "fault-plain";
    /** A queue whose handler fails every first attempt, as a dependency that is down does. */
    public static final String FLAKY_QUEUE = "fault-flaky";
    /** A queue with a cluster-wide concurrency cap, whose handler records each run's start and end. */
    public static final String CAPPED_QUEUE = "fault-capped";
    /** A queue whose handler takes every connection the pool has left, as a burst of requests does. */
    public static final String POOL_HOG_QUEUE = "fault-pool-hog";

    /** How long the job works, in milliseconds. */
    public record Work(long millis) {
    }

    public static void main(String[] args) {
        SpringApplication application = new SpringApplication(FaultWorker.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.run(args);
    }

    @Bean
    Handler faultHandler(DataSource dataSource) {
        TransactionTemplate ownTransaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        ownTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        return new Handler(dataSource, new JdbcTemplate(dataSource), ownTransaction);
    }

    static final class Handler {

        private final DataSource dataSource;
        private final JdbcTemplate jdbc;
        private final TransactionTemplate ownTransaction;
        private final long pid = ProcessHandle.current().pid();

        Handler(DataSource dataSource, JdbcTemplate jdbc, TransactionTemplate ownTransaction) {
            this.dataSource = dataSource;
            this.jdbc = jdbc;
            this.ownTransaction = ownTransaction;
        }

        @QueueHandler(value = QUEUE, transactional = true)
        void work(Work work, JobContext job) throws InterruptedException {
            recordInvocation(job);
            Thread.sleep(work.millis());
            // Commits only with the fenced completion; a stale owner's effect is rolled back.
            jdbc.update(Ledgers.RECORD_EFFECT, job.id(), pid, job.id());
        }

        /** Works without a transaction: at-least-once, completed by the batch writer (JOB_COMPLETE_MANY). */
        @QueueHandler(PLAIN_QUEUE)
        void plain(Work work, JobContext job) throws InterruptedException {
            recordInvocation(job);
            Thread.sleep(work.millis());
        }

        /** Records its run's start and end (the database's clock, each committed at once) around the work. */
        @QueueHandler(CAPPED_QUEUE)
        void capped(Work work, JobContext job) throws InterruptedException {
            recordInvocation(job);
            ownTransaction.executeWithoutResult(status -> jdbc.update(Ledgers.RECORD_RUN_START, job.id(),
                    job.attempt(), pid));
            Thread.sleep(work.millis());
            ownTransaction.executeWithoutResult(status -> jdbc.update(Ledgers.RECORD_RUN_END, job.id(),
                    job.attempt(), pid));
        }

        /** Fails the first attempt; the retry succeeds. */
        @QueueHandler(FLAKY_QUEUE)
        void flaky(Work work, JobContext job) {
            recordInvocation(job);
            if (job.attempt() == 1) {
                throw new IllegalStateException("the dependency is down");
            }
        }

        /** Halts the JVM mid-job: no shutdown hook, no release, the lease left to expire. */
        @QueueHandler(HALT_QUEUE)
        void halt(Work work, JobContext job) {
            recordInvocation(job);
            Runtime.getRuntime().halt(137);
        }

        /**
         * Borrows connections until the pool's connection timeout says none is left, holds them
         * for the work's time, then gives them back; the window is recorded on one of them.
         */
        @QueueHandler(POOL_HOG_QUEUE)
        void hogThePool(Work work, JobContext job) throws SQLException, InterruptedException {
            recordInvocation(job);
            List<Connection> taken = new ArrayList<>();
            try {
                while (true) {
                    try {
                        taken.add(dataSource.getConnection());
                    } catch (SQLException exhausted) {
                        break;
                    }
                }
                if (taken.isEmpty()) {
                    throw new IllegalStateException("the pool gave no connection at all");
                }
                record(taken.get(0), Ledgers.RECORD_POOL_HELD, job.id(), taken.size());
                Thread.sleep(work.millis());
            } finally {
                try {
                    if (!taken.isEmpty()) {
                        record(taken.get(0), Ledgers.RECORD_POOL_RETURNED, job.id());
                    }
                } finally {
                    for (Connection connection : taken) {
                        connection.close();
                    }
                }
            }
        }

        private static void record(Connection connection, String sql, Object... parameters) throws SQLException {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                for (int i = 0; i < parameters.length; i++) {
                    statement.setObject(i + 1, parameters[i]);
                }
                statement.executeUpdate();
            }
        }

        /** Committed before the work, whatever becomes of this attempt; with this JVM's clock beside the database's. */
        private void recordInvocation(JobContext job) {
            ownTransaction.executeWithoutResult(status -> jdbc.update(Ledgers.RECORD_INVOCATION, job.id(),
                    job.attempt(), pid, Timestamp.from(Instant.now()), Long.toString(pid), job.id()));
        }
    }
}

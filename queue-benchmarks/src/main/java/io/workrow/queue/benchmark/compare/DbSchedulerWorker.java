package io.workrow.queue.benchmark.compare;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;

/**
 * A db-scheduler worker JVM: {@code <jdbc url> <user> <threads> <noop|sleep> <polling ms>}, polling
 * with lock-and-fetch (its fastest strategy on PostgreSQL) for the one-time task {@code bench}.
 */
public final class DbSchedulerWorker {

    private DbSchedulerWorker() {
    }

    public static void main(String[] args) {
        int threads = Integer.parseInt(args[2]);
        WorkerProtocol protocol = new WorkerProtocol(args[3]);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setUsername(args[1]);
        config.setMaximumPoolSize(threads + 4);
        HikariDataSource dataSource = new HikariDataSource(config);
        OneTimeTask<String> task = DbSchedulerContender.task((instance, context) ->
                protocol.handle(DbSchedulerContender.enqueuedAt(instance.getData())));
        Scheduler scheduler = Scheduler.create(dataSource, task)
                .threads(threads)
                .pollUsingLockAndFetch(0.5, 1.0)
                .pollingInterval(Duration.ofMillis(Long.parseLong(args[4])))
                .build();
        scheduler.start();
        protocol.runUntilStdinCloses(() -> {
            scheduler.stop();
            dataSource.close();
        });
    }
}

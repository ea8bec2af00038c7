package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.JobRequest;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.store.ClaimedPosition;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.PositionEnd;
import io.workrow.queue.store.SqlIdentifier;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The steps of an idle pick-up that happen in the database, one job at a time, with no runtime:
 * the enqueue call up to its commit, from its return until a listening connection holds the
 * insert notification, and the claim with its commit. What a runtime's pick-up delay adds to
 * these is its own wake-ups and hand-off. Uses its own schema ({@code workrow_pickup}), dropped
 * and recreated.
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
 *     -Dbenchmark.main=io.workrow.queue.benchmark.PickupSteps -Dbenchmark.jobs=500
 * </pre>
 */
public final class PickupSteps {

    private static final String QUEUE = "pickup";

    private PickupSteps() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = DrainBenchmark.parse(args);
        int jobs = Integer.parseInt(options.getOrDefault("jobs", "500"));
        int warmUp = Math.max(1, jobs / 5);
        SqlIdentifier schema = SqlIdentifier.of("--schema", "workrow_pickup");
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(options)) {
            new JdbcTemplate(dataSource).execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
            new WorkrowMigrations(dataSource, schema).migrate();
            JobStore store = JobStore.of(dataSource, schema);
            JdbcJobQueue jobQueue = new JdbcJobQueue(store, JacksonPayloadCodec.withDefaultMapper());
            double[] enqueue = new double[jobs];
            double[] notified = new double[jobs];
            double[] claim = new double[jobs];
            try (Connection listening = dataSource.getConnection(); Statement listen = listening.createStatement()) {
                listen.execute("LISTEN \"" + store.notifyChannel() + "\"");
                PGConnection notifications = listening.unwrap(PGConnection.class);
                for (int i = 0; i < warmUp + jobs; i++) {
                    long started = System.nanoTime();
                    jobQueue.enqueue(JobRequest.of(QUEUE, Map.of("n", i)));
                    long enqueued = System.nanoTime();
                    PGNotification[] received = notifications.getNotifications(1000);
                    long heard = System.nanoTime();
                    List<ClaimedPosition> claimed = store.claims().claim(QUEUE, "pickup-steps", 500,
                            Duration.ofMinutes(5), false);
                    long claimedAt = System.nanoTime();
                    if (received == null || received.length == 0 || claimed.size() != 1) {
                        throw new IllegalStateException("job " + i + ": " + (received == null ? 0 : received.length)
                                + " notification(s), " + claimed.size() + " claimed");
                    }
                    store.claims().endMany(List.of(PositionEnd.completed(claimed.get(0))));
                    if (i >= warmUp) {
                        enqueue[i - warmUp] = (enqueued - started) / 1e6;
                        notified[i - warmUp] = (heard - enqueued) / 1e6;
                        claim[i - warmUp] = (claimedAt - heard) / 1e6;
                    }
                    TimeUnit.MILLISECONDS.sleep(20);
                }
                listen.execute("UNLISTEN *");
            }
            System.out.printf("Pick-up steps over %d jobs one every 20 ms (after %d to warm up), PostgreSQL %s:%n",
                    jobs, warmUp, new JdbcTemplate(dataSource).queryForObject("SHOW server_version", String.class));
            print("enqueue call, to its commit", enqueue);
            print("enqueue's return to the notification", notified);
            print("claim, with its commit", claim);
        }
    }

    private static void print(String step, double[] millis) {
        double[] sorted = millis.clone();
        Arrays.sort(sorted);
        System.out.printf("  %-38s p50 %.2f ms  p90 %.2f ms%n", step, sorted[sorted.length / 2],
                sorted[(int) (sorted.length * 0.9)]);
    }
}

package io.workrow.queue.benchmark;

import com.zaxxer.hikari.HikariDataSource;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.RowPerJobStore;
import io.workrow.queue.store.NewJob;
import io.workrow.queue.store.SqlIdentifier;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.postgresql.PGConnection;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What loading a bulk enqueue costs two ways, in turns, each on a freshly migrated schema: Workrow's
 * own {@code RowPerJobStore.insertMany} (one INSERT over eleven unnested arrays, ids returned) against
 * the same rows through COPY (ids taken first from the identity sequence with the database's time,
 * then the rows as text), {@code chunk} jobs without keys per call from one caller, as
 * {@code JobQueue.enqueueAll} sends them. The payloads are encoded beforehand, the same for both.
 *
 * <pre>
 * ./mvnw -B -Pbenchmark -pl queue-benchmarks -am verify -DskipTests \
 *     -Dbenchmark.main=io.workrow.queue.benchmark.BulkEnqueueStatementsBenchmark -Dbenchmark.jobs=200000
 * </pre>
 */
public final class BulkEnqueueStatementsBenchmark {

    private static final String QUEUE = "bench";
    private static final List<String> VARIANTS = List.of("insert", "copy");

    public static void main(String[] args) throws Exception {
        Map<String, String> given = DrainBenchmark.parse(args);
        int jobs = Integer.parseInt(given.getOrDefault("jobs", "200000"));
        int chunk = Integer.parseInt(given.getOrDefault("chunk", "1000"));
        int rounds = Integer.parseInt(given.getOrDefault("rounds", "3"));
        SqlIdentifier schema = SqlIdentifier.of("--schema", given.getOrDefault("schema", "workrow_bulk_statements"));
        List<NewJob> batch = new ArrayList<>(chunk);
        for (int n = 0; n < chunk; n++) {
            batch.add(new NewJob(QUEUE, null, 0, 0, null, "{\"n\": " + n + ", \"t\": 1763938000123.5}", "{}", null, 0,
                    5));
        }
        try (HikariDataSource dataSource = DrainBenchmark.dataSource(given)) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            System.out.printf("Bulk enqueue statements: jobs=%d chunk=%d rounds=%d cores=%d PostgreSQL %s%n", jobs,
                    chunk, rounds, Runtime.getRuntime().availableProcessors(),
                    jdbc.queryForObject("SHOW server_version", String.class));
            Map<String, List<Double>> rates = new LinkedHashMap<>();
            for (int round = 1; round <= rounds; round++) {
                for (String variant : VARIANTS) {
                    jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
                    new WorkrowMigrations(dataSource, schema).upTo(WorkrowMigrations.ROW_PER_JOB_VERSION).migrate();
                    RowPerJobStore store = new RowPerJobStore(dataSource, schema);
                    long started = System.nanoTime();
                    for (int loaded = 0; loaded < jobs; loaded += chunk) {
                        List<Long> ids = variant.equals("insert") ? store.insertMany(batch) : copy(dataSource, schema, batch);
                        if (ids.size() != chunk) {
                            throw new IllegalStateException(variant + " returned " + ids.size() + " ids for " + chunk);
                        }
                    }
                    double rate = jobs / ((System.nanoTime() - started) / 1e9);
                    long rows = jdbc.queryForObject("SELECT count(*) FROM " + schema.quoted() + ".workrow_job", Long.class);
                    if (rows != (long) jobs / chunk * chunk) {
                        throw new IllegalStateException(variant + " left " + rows + " rows");
                    }
                    rates.computeIfAbsent(variant, name -> new ArrayList<>()).add(rate);
                    System.out.printf("round %d  %-7s %,9.0f rows/s%n", round, variant, rate);
                }
            }
            double insert = DrainStatementsBenchmark.median(rates.get("insert"));
            for (String variant : VARIANTS) {
                System.out.printf("median   %-7s %,9.0f rows/s  %.2fx insert  (%s)%n", variant,
                        DrainStatementsBenchmark.median(rates.get(variant)),
                        DrainStatementsBenchmark.median(rates.get(variant)) / insert, rates.get(variant).stream()
                                .map(rate -> String.format("%,.0f", rate)).collect(Collectors.joining(", ")));
            }
            jdbc.execute("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        }
    }

    /** The batch through COPY, with ids and due time taken first; returns the ids in input order. */
    private static List<Long> copy(HikariDataSource dataSource, SqlIdentifier schema, List<NewJob> jobs)
            throws Exception {
        String table = schema.quoted() + ".workrow_job";
        try (Connection connection = dataSource.getConnection()) {
            List<Long> ids = new ArrayList<>(jobs.size());
            Instant now = null;
            try (PreparedStatement statement = connection.prepareStatement("SELECT nextval(pg_get_serial_sequence('"
                    + table + "', 'id')), statement_timestamp() FROM generate_series(1, ?)")) {
                statement.setInt(1, jobs.size());
                try (ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                        now = rs.getObject(2, OffsetDateTime.class).toInstant();
                    }
                }
            }
            StringBuilder rows = new StringBuilder(jobs.size() * 96);
            for (int i = 0; i < jobs.size(); i++) {
                NewJob job = jobs.get(i);
                // Payloads here hold no tab, newline or backslash, so the text format needs no escapes.
                rows.append(ids.get(i)).append('\t').append(job.queue()).append("\t\\N\t").append(job.partitionBucket())
                        .append('\t').append(job.priority()).append('\t').append(job.payloadJson()).append('\t')
                        .append(job.headersJson()).append("\tpending\t").append(now).append('\t')
                        .append(job.maxAttempts()).append("\t\n");
            }
            connection.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY " + table + " (id, queue, partition_key,"
                    + " partition_bucket, priority, payload, headers, status, run_at, max_attempts, fairness_key)"
                    + " FROM STDIN", new StringReader(rows.toString()));
            return ids;
        }
    }
}

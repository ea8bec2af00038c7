package io.workrow.queue.migration;

import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.net.URL;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.resource.LoadableResource;

/**
 * Workrow's migration scripts, named one by one, as the {@link ResourceProvider} of Workrow's Flyway.
 *
 * <p>Flyway finds scripts by listing a classpath directory, which a GraalVM native image cannot do:
 * its resources can be read by name but not listed. So the names are kept here, read by name in
 * every runtime alike, and given to AOT processing as resource hints. A test checks this list
 * against the directory, so a script added without its name here fails the build.
 */
public final class MigrationScripts implements ResourceProvider {

    /** The classpath directory of the scripts. */
    public static final String DIRECTORY = "io/workrow/queue/migration";

    /** Every script, in version order. */
    public static final List<String> NAMES = List.of(
            "V1__create_workrow_job.sql",
            "V2__pause_dead_index_stats_view.sql",
            "V3__per_schema_channel_and_maintenance_indexes.sql",
            "V4__scheduled_status.sql",
            "V5__lease_expiries_and_breaker.sql",
            "V6__ordered_partitions.sql",
            "V7__fair_queuing.sql",
            "V8__claim_indexes_by_key.sql",
            "V9__recurring_jobs.sql",
            "V10__dead_error_kind_index.sql",
            "V11__lease_holders_and_queue_rules.sql",
            "V12__scheduled_by_queue_index.sql",
            "V13__write_once_jobs_and_batch_claims.sql",
            "V14__job_results.sql",
            "V15__job_dependencies.sql",
            "V16__job_batches.sql",
            "V17__enqueue_from_sql_deadlines_and_snoozes.sql",
            "V18__key_caps_stored_and_deadlines_in_the_view.sql",
            "V19__deadlines_swept.sql",
            "V20__cap_shares.sql");

    private final ClassLoader classLoader;

    public MigrationScripts(ClassLoader classLoader) {
        this.classLoader = classLoader;
    }

    /** The classpath path of a script: {@code io/workrow/queue/migration/<name>}. */
    public static String path(String name) {
        return DIRECTORY + "/" + name;
    }

    @Override
    public LoadableResource getResource(String name) {
        return NAMES.contains(name) ? new Script(name) : null;
    }

    @Override
    public Collection<LoadableResource> getResources(String prefix, String[] suffixes) {
        return NAMES.stream()
                .filter(name -> name.startsWith(prefix) && Arrays.stream(suffixes).anyMatch(name::endsWith))
                .map(name -> (LoadableResource) new Script(name))
                .toList();
    }

    /** One script, read from the classpath by its name. */
    private final class Script extends LoadableResource {

        private final String name;

        Script(String name) {
            this.name = name;
        }

        @Override
        public Reader read() {
            InputStream stream = classLoader.getResourceAsStream(path(name));
            if (stream == null) {
                throw new FlywayException("Workrow's migration " + path(name) + " is not on the classpath");
            }
            return new InputStreamReader(stream, StandardCharsets.UTF_8);
        }

        @Override
        public String getAbsolutePath() {
            return path(name);
        }

        @Override
        public String getAbsolutePathOnDisk() {
            URL url = classLoader.getResource(path(name));
            return url == null ? path(name) : URLDecoder.decode(url.getPath(), StandardCharsets.UTF_8);
        }

        @Override
        public String getFilename() {
            return name;
        }

        @Override
        public String getRelativePath() {
            return name;
        }
    }
}

package io.workrow.queue.spring.lifecycle;

import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.SqlIdentifier;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Fails start-up when Workrow's schema answers but has not been migrated to the version this
 * release runs ({@value WorkrowMigrations#LATEST_VERSION}), judged by the objects the later
 * migrations create: with
 * {@code workrow.migrations.enabled=false} the application applies Workrow's migrations itself, and
 * a schema left at an older version would otherwise fail at its first enqueue or claim. Runs once
 * every singleton is created, so an application's own migration run, which Spring Boot runs as
 * one, has happened. A database that does not answer yet is left to the runtime, which waits for
 * it.
 */
public final class WorkrowLayoutCheck implements SmartInitializingSingleton {

    private static final Logger log = LoggerFactory.getLogger(WorkrowLayoutCheck.class);

    private final DataSource dataSource;
    private final SqlIdentifier schema;

    public WorkrowLayoutCheck(DataSource dataSource, SqlIdentifier schema) {
        this.dataSource = dataSource;
        this.schema = schema;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<String, Object> found;
        try {
            found = new JdbcTemplate(dataSource).queryForMap("""
                    SELECT to_regclass(?) IS NOT NULL AS layout,
                           EXISTS (SELECT 1 FROM pg_attribute
                                   WHERE attrelid = to_regclass(?) AND attname = 'result' AND NOT attisdropped) AS results,
                           to_regclass(?) IS NOT NULL AS dependencies,
                           to_regclass(?) IS NOT NULL AS batches,
                           EXISTS (SELECT 1 FROM pg_attribute
                                   WHERE attrelid = to_regclass(?) AND attname = 'expires_at' AND NOT attisdropped)
                               AS deadlines,
                           EXISTS (SELECT 1 FROM pg_attribute
                                   WHERE attrelid = to_regclass(?) AND attname = 'key_configured'
                                     AND NOT attisdropped) AS key_caps,
                           to_regclass(?) IS NOT NULL AS deadlines_swept,
                           to_regclass(?) IS NOT NULL AS cap_shares
                    """, schema.quoted() + ".workrow_claim", schema.quoted() + ".workrow_outcome",
                    schema.quoted() + ".workrow_waiting", schema.quoted() + ".workrow_batch",
                    schema.quoted() + ".workrow_job_data", schema.quoted() + ".workrow_queue_cap",
                    schema.quoted() + ".workrow_deadline", schema.quoted() + ".workrow_cap_share");
        } catch (DataAccessException e) {
            log.warn("Could not check Workrow's schema {} at start-up: {}", schema, e.getMessage());
            return;
        }
        if (!Boolean.TRUE.equals(found.get("layout"))) {
            throw notMigrated(WorkrowMigrations.WRITE_ONCE_VERSION, "it has no workrow_claim table");
        }
        if (!Boolean.TRUE.equals(found.get("results"))) {
            throw notMigrated("14", "workrow_outcome has no result column");
        }
        if (!Boolean.TRUE.equals(found.get("dependencies"))) {
            throw notMigrated("15", "it has no workrow_waiting table");
        }
        if (!Boolean.TRUE.equals(found.get("batches"))) {
            throw notMigrated("16", "it has no workrow_batch table");
        }
        if (!Boolean.TRUE.equals(found.get("deadlines"))) {
            throw notMigrated("17", "workrow_job_data has no expires_at column");
        }
        if (!Boolean.TRUE.equals(found.get("key_caps"))) {
            throw notMigrated("18", "workrow_queue_cap has no key_configured column");
        }
        if (!Boolean.TRUE.equals(found.get("deadlines_swept"))) {
            throw notMigrated("19", "it has no workrow_deadline table");
        }
        if (!Boolean.TRUE.equals(found.get("cap_shares"))) {
            throw notMigrated("20", "it has no workrow_cap_share table");
        }
    }

    private IllegalStateException notMigrated(String version, String evidence) {
        return new IllegalStateException("Workrow's schema " + schema.name() + " is not migrated to version " + version
                + " (" + evidence + "): apply Workrow's migrations from " + WorkrowMigrations.LOCATION
                + " to the latest version (" + WorkrowMigrations.LATEST_VERSION + "), or set"
                + " workrow.migrations.enabled=true so that Workrow applies them at start-up");
    }
}

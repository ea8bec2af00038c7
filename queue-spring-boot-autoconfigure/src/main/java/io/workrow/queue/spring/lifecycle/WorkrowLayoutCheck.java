package io.workrow.queue.spring.lifecycle;

import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.SqlIdentifier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Fails start-up when Workrow's schema answers but has not been migrated to the layout this
 * version runs (schema version {@value WorkrowMigrations#WRITE_ONCE_VERSION}): with
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
        Boolean migrated;
        try {
            migrated = new JdbcTemplate(dataSource).queryForObject("SELECT to_regclass(?) IS NOT NULL", Boolean.class,
                    schema.quoted() + ".workrow_claim");
        } catch (DataAccessException e) {
            log.warn("Could not check Workrow's schema {} at start-up: {}", schema, e.getMessage());
            return;
        }
        if (!Boolean.TRUE.equals(migrated)) {
            throw new IllegalStateException("Workrow's schema " + schema.name() + " is not migrated to version "
                    + WorkrowMigrations.WRITE_ONCE_VERSION + " (it has no workrow_claim table): apply Workrow's"
                    + " migrations from " + WorkrowMigrations.LOCATION + " to the latest version, or set"
                    + " workrow.migrations.enabled=true so that Workrow applies them at start-up");
        }
    }
}

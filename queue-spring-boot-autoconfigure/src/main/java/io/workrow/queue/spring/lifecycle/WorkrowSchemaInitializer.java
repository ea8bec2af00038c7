package io.workrow.queue.spring.lifecycle;

import io.workrow.queue.migration.WorkrowMigrations;
import org.springframework.beans.factory.InitializingBean;

/**
 * Runs Workrow's migrations when the bean is created. Beans that use Workrow's tables depend on
 * it, so the tables exist before anything enqueues or claims.
 */
public final class WorkrowSchemaInitializer implements InitializingBean {

    private final WorkrowMigrations migrations;

    public WorkrowSchemaInitializer(WorkrowMigrations migrations) {
        this.migrations = migrations;
    }

    @Override
    public void afterPropertiesSet() {
        migrations.migrate();
    }
}

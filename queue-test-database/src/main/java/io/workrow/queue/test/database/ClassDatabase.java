package io.workrow.queue.test.database;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that gives its test class a fresh {@link TestDatabase} with a connection
 * pool, prepared once (its schema migrated, say), and closes the pool and drops the database
 * after the class. A {@code @Nested} class shares its enclosing class's database.
 */
public final class ClassDatabase implements BeforeAllCallback, AfterAllCallback {

    private final int poolSize;
    private final Consumer<DataSource> prepare;
    private TestDatabase database;
    private HikariDataSource dataSource;
    private String ownerId;

    /** @param prepare run once on the new database's pool, before the class's tests */
    public ClassDatabase(int poolSize, Consumer<DataSource> prepare) {
        this.poolSize = poolSize;
        this.prepare = prepare;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (ownerId != null) {
            return; // a @Nested class: its enclosing class's database is already there
        }
        ownerId = context.getUniqueId();
        database = TestDatabase.createFor(context.getRequiredTestClass());
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(poolSize);
        config.setPoolName(database.name());
        dataSource = new HikariDataSource(config);
        prepare.accept(dataSource);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (!context.getUniqueId().equals(ownerId)) {
            return;
        }
        ownerId = null;
        try {
            dataSource.close();
        } finally {
            database.drop();
        }
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public TestDatabase database() {
        return database;
    }
}

package io.workrow.queue.aot;

import io.workrow.queue.migration.MigrationScripts;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What the engine reaches at run time that AOT processing cannot see in its code: the migration
 * scripts (read by name, {@link MigrationScripts}), the virtual-thread API it calls reflectively
 * because it compiles for Java 17 ({@code HandlerThreads}), and the pools' size accessors it reads to
 * check the connection budget ({@code ConnectionBudget}).
 */
public final class WorkrowRuntimeHints implements RuntimeHintsRegistrar {

    /** Pool classes whose maximum size the connection budget reads, by accessor name. */
    static final List<String[]> POOL_SIZE_ACCESSORS = List.of(
            new String[] {"com.zaxxer.hikari.HikariConfig", "getMaximumPoolSize"},
            new String[] {"org.apache.commons.dbcp2.BasicDataSource", "getMaxTotal"},
            new String[] {"org.apache.tomcat.jdbc.pool.PoolProperties", "getMaxActive"},
            new String[] {"org.apache.tomcat.jdbc.pool.DataSourceProxy", "getMaxActive"});

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        for (String name : MigrationScripts.NAMES) {
            hints.resources().registerPattern(MigrationScripts.path(name));
        }
        hints.reflection().registerType(Thread.class, type -> type.withMethod("ofVirtual", List.of(),
                ExecutableMode.INVOKE));
        hints.reflection().registerType(TypeReference.of("java.lang.Thread$Builder"), type -> type
                .withMethod("name", List.of(TypeReference.of(String.class), TypeReference.of(long.class)),
                        ExecutableMode.INVOKE)
                .withMethod("factory", List.of(), ExecutableMode.INVOKE));
        hints.reflection().registerType(Executors.class, type -> type.withMethod("newThreadPerTaskExecutor",
                List.of(TypeReference.of(ThreadFactory.class)), ExecutableMode.INVOKE));
        for (String[] accessor : POOL_SIZE_ACCESSORS) {
            hints.reflection().registerTypeIfPresent(classLoader, accessor[0], type -> type.withMethod(accessor[1],
                    List.of(), ExecutableMode.INVOKE));
        }
    }
}

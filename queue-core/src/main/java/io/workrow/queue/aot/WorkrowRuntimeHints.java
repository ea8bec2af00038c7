package io.workrow.queue.aot;

import io.workrow.queue.migration.MigrationScripts;
import io.workrow.queue.worker.connection.ConnectionBudget;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What the engine reaches at run time that AOT processing cannot see in its code: the migration
 * scripts (read by name, {@link MigrationScripts}), the JDK proxies around the result writer's and
 * lease keeper's reserved connection and its statements ({@code ReservedConnection}), the
 * virtual-thread API it calls reflectively because it compiles for Java 17 ({@code HandlerThreads}),
 * and the pools' size accessors it reads to check the connection budget ({@link ConnectionBudget}).
 */
public final class WorkrowRuntimeHints implements RuntimeHintsRegistrar {

    /** The interfaces {@code ReservedConnection} proxies: a connection and the statements it makes. */
    static final List<Class<?>> PROXIED = List.of(Connection.class, Statement.class, PreparedStatement.class,
            CallableStatement.class);

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        for (String name : MigrationScripts.NAMES) {
            hints.resources().registerPattern(MigrationScripts.path(name));
        }
        for (Class<?> proxied : PROXIED) {
            hints.proxies().registerJdkProxy(proxied);
        }
        hints.reflection().registerType(Thread.class, type -> type.withMethod("ofVirtual", List.of(),
                ExecutableMode.INVOKE));
        hints.reflection().registerType(TypeReference.of("java.lang.Thread$Builder"), type -> type
                .withMethod("name", List.of(TypeReference.of(String.class), TypeReference.of(long.class)),
                        ExecutableMode.INVOKE)
                .withMethod("factory", List.of(), ExecutableMode.INVOKE));
        hints.reflection().registerType(Executors.class, type -> type.withMethod("newThreadPerTaskExecutor",
                List.of(TypeReference.of(ThreadFactory.class)), ExecutableMode.INVOKE));
        ConnectionBudget.POOL_SIZE_ACCESSORS.forEach((pool, accessor) -> hints.reflection().registerTypeIfPresent(
                classLoader, pool, type -> type.withMethod(accessor, List.of(), ExecutableMode.INVOKE)));
    }
}

package io.workrow.queue.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import io.workrow.queue.JobContext;
import io.workrow.queue.QueueHandler;
import io.workrow.queue.migration.MigrationScripts;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.ExecutableHint;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeHint;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.javapoet.ClassName;

/**
 * The hints Spring's AOT processing gets from Workrow, checked with Spring's own predicates: what a
 * native image needs to call handlers, read their payloads, run the migrations, serve the
 * dashboard and bind {@code workrow.*}.
 */
class WorkrowRuntimeHintsTests {

    record Address(String street, String city) {
    }

    record Item(String sku, int quantity) {
    }

    record Parcel(long orderId, Address address, List<Item> items) {
    }

    record Shipped(String trackingNumber) {
    }

    record Unrelated(String value) {
    }

    public static class ShippingHandlers {

        @QueueHandler("ship")
        public Shipped ship(Parcel parcel, JobContext job) {
            return new Shipped("T-" + parcel.orderId());
        }

        @QueueHandler("ping")
        void ping(Map<String, Unrelated> payload) {
        }

        public void notAHandler(String value) {
        }
    }

    /** What AOT processing registers from aot.factories, as it does for every application. */
    private static RuntimeHints factoriesHints() {
        RuntimeHints hints = new RuntimeHints();
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories").load(RuntimeHintsRegistrar.class)
                .forEach(registrar -> registrar.registerHints(hints, WorkrowRuntimeHintsTests.class.getClassLoader()));
        return hints;
    }

    @Test
    void aHandlerMethodItsPayloadTypesAndItsResultAreRegisteredWhenAotProcessesTheContext() {
        RuntimeHints hints = new RuntimeHints();
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean("shipping", ShippingHandlers.class);
            new ApplicationContextAotGenerator().processAheadOfTime(context, new DefaultGenerationContext(
                    new ClassNameGenerator(ClassName.get(WorkrowRuntimeHintsTests.class)), new InMemoryGeneratedFiles(),
                    hints));
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(ShippingHandlers.class, "ship")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(ShippingHandlers.class, "ping")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(ShippingHandlers.class, "notAHandler"))
                .rejects(hints);
        // Jackson binds the payload's record, the records inside it, a collection's elements, a
        // map's values, and writes the result.
        for (Class<?> bound : List.of(Parcel.class, Address.class, Item.class, Shipped.class, Unrelated.class)) {
            assertThat(RuntimeHintsPredicates.reflection().onType(bound)).as(bound.getSimpleName()).accepts(hints);
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Parcel.class, "address")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Item.class, "quantity")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(JobContext.class)).rejects(hints);
    }

    @Test
    void everyMigrationScriptAndEveryDashboardFileIsAResource() {
        RuntimeHints hints = factoriesHints();
        assertThat(MigrationScripts.NAMES).hasSizeGreaterThan(10);
        for (String name : MigrationScripts.NAMES) {
            assertThat(RuntimeHintsPredicates.resource().forResource(MigrationScripts.path(name))).as(name).accepts(hints);
            assertThat(WorkrowRuntimeHintsTests.class.getClassLoader().getResource(MigrationScripts.path(name)))
                    .as(name).isNotNull();
        }
        for (String asset : WorkrowAutoConfigurationRuntimeHints.DASHBOARD_ASSETS) {
            String path = WorkrowAutoConfigurationRuntimeHints.DASHBOARD_DIRECTORY + "/" + asset;
            assertThat(RuntimeHintsPredicates.resource().forResource(path)).as(path).accepts(hints);
            assertThat(WorkrowRuntimeHintsTests.class.getClassLoader().getResource(path)).as(path).isNotNull();
        }
        assertThat(RuntimeHintsPredicates.resource().forResource("io/workrow/queue/spring/dashboard/other.js"))
                .rejects(hints);
    }

    @Test
    void theWorkrowPropertiesAndTheirNestedTypesAreBindable() {
        RuntimeHints hints = factoriesHints();
        for (Class<?> type : List.of(WorkrowProperties.class, WorkrowProperties.Queue.class,
                WorkrowProperties.Breaker.class, WorkrowProperties.Recurring.class, WorkrowProperties.Dashboard.class)) {
            assertThat(RuntimeHintsPredicates.reflection().onType(type)).as(type.getSimpleName()).accepts(hints);
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(WorkrowProperties.class, "setSchema"))
                .accepts(hints);
    }

    @Test
    void whatTheEngineCallsReflectivelyIsRegistered() {
        RuntimeHints hints = factoriesHints();
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(HikariConfig.class, "getMaximumPoolSize"))
                .accepts(hints);
        // The reserved connection of the result writer and the lease keeper, and its statements.
        for (Class<?> proxied : List.of(Connection.class, Statement.class, PreparedStatement.class,
                CallableStatement.class)) {
            assertThat(RuntimeHintsPredicates.proxies().forInterfaces(proxied)).as(proxied.getSimpleName())
                    .accepts(hints);
        }
        // The virtual-thread API, named because Workrow compiles for Java 17, where it does not exist.
        assertThat(methods(hints, "java.lang.Thread")).contains("ofVirtual");
        assertThat(methods(hints, "java.lang.Thread$Builder")).contains("name", "factory");
        assertThat(methods(hints, "java.util.concurrent.Executors")).contains("newThreadPerTaskExecutor");
    }

    private static List<String> methods(RuntimeHints hints, String type) {
        TypeHint hint = hints.reflection().getTypeHint(TypeReference.of(type));
        assertThat(hint).as(type).isNotNull();
        return hint.methods().map(ExecutableHint::getName).toList();
    }
}

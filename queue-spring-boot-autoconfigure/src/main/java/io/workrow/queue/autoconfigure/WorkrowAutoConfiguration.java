package io.workrow.queue.autoconfigure;

import io.workrow.queue.JobQueue;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.metrics.EnqueueHeaders;
import io.workrow.queue.client.JdbcJobQueue;
import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.metrics.QueueMetrics;
import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.store.SchemaLookup;
import io.workrow.queue.payload.JacksonPayloadCodec;
import io.workrow.queue.payload.PayloadCodec;
import io.workrow.queue.spring.lifecycle.WorkrowLayoutCheck;
import io.workrow.queue.spring.lifecycle.WorkrowSchemaInitializer;
import io.workrow.queue.store.JobStore;
import io.workrow.queue.store.SqlIdentifier;
import io.workrow.queue.store.WriteOnceStore;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.json.JsonMapper;

/**
 * Workrow's producer side and schema: validated settings, migrations, the {@link JobStore}, the
 * payload codec on the application's {@link JsonMapper}, {@link JobQueue} and {@link QueueAdmin}.
 * Present whenever there is one {@link DataSource}, also with {@code workrow.enabled=false}.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
        "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration"})
@ConditionalOnClass(JobQueue.class)
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties(WorkrowProperties.class)
public final class WorkrowAutoConfiguration {

    @Bean
    WorkrowSettings workrowSettings(WorkrowProperties properties) {
        return WorkrowSettings.of(properties);
    }

    @Bean
    @ConditionalOnBooleanProperty(name = "workrow.migrations.enabled", matchIfMissing = true)
    WorkrowSchemaInitializer workrowSchemaInitializer(DataSource dataSource, WorkrowSettings settings) {
        return new WorkrowSchemaInitializer(new WorkrowMigrations(dataSource, schemaOf(dataSource, settings)));
    }

    @Bean
    @ConditionalOnBooleanProperty(name = "workrow.migrations.enabled", havingValue = false)
    WorkrowLayoutCheck workrowLayoutCheck(DataSource dataSource, WorkrowSettings settings) {
        return new WorkrowLayoutCheck(dataSource, schemaOf(dataSource, settings));
    }

    @Bean
    @ConditionalOnMissingBean
    JobStore workrowJobStore(DataSource dataSource, WorkrowSettings settings,
            ObjectProvider<WorkrowSchemaInitializer> schemaInitializer) {
        // Asking for the initializer makes the store, and all that uses it, wait for the migrations.
        schemaInitializer.ifAvailable(initializer -> { });
        // The layout of the migrations this starter ships, not the one the schema has now: with
        // migrations off, the application's own migration run may apply them after this bean.
        return new WriteOnceStore(dataSource, schemaOf(dataSource, settings),
                settings.properties().getStatementTimeout());
    }

    @Bean
    @ConditionalOnMissingBean
    PayloadCodec workrowPayloadCodec(ObjectProvider<JsonMapper> jsonMapper) {
        return new JacksonPayloadCodec(jsonMapper.getIfAvailable(() -> JsonMapper.builder().build()));
    }

    @Bean
    @ConditionalOnMissingBean(JobQueue.class)
    JdbcJobQueue jobQueue(JobStore store, PayloadCodec codec, WorkrowSettings settings,
            ObjectProvider<EnqueueHeaders> headers) {
        return producer(store, codec, settings).withHeaders(headers.getIfAvailable(() -> EnqueueHeaders.NONE));
    }

    /** A producer on {@code store} with the configured max-attempts per queue and payload cap. */
    static JdbcJobQueue producer(JobStore store, PayloadCodec codec, WorkrowSettings settings) {
        return new JdbcJobQueue(store, codec, settings::maxAttempts, settings.maxPayloadBytes());
    }

    @Bean
    @ConditionalOnMissingBean(QueueAdmin.class)
    JdbcQueueAdmin queueAdmin(JobStore store, ObjectProvider<QueueMetrics> metrics) {
        return new JdbcQueueAdmin(store, metrics.getIfAvailable(() -> QueueMetrics.NOOP));
    }

    private static SqlIdentifier schemaOf(DataSource dataSource, WorkrowSettings settings) {
        return settings.schema() != null ? settings.schema() : SchemaLookup.currentSchema(dataSource);
    }
}

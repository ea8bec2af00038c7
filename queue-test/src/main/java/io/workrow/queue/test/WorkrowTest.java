package io.workrow.queue.test;

import io.workrow.queue.test.database.PostgresServer;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.test.context.ContextCustomizerFactories;
import org.springframework.test.context.TestExecutionListeners;

/**
 * For Spring Boot tests ({@code @SpringBootTest}) of an application on the Workrow starter:
 * <ul>
 *   <li>the test class gets a fresh database on the real PostgreSQL that {@link PostgresServer}
 *       finds ({@code WORKROW_TEST_JDBC_URL}, else Testcontainers when Docker answers, else the local
 *       server), set as {@code spring.datasource.url}, {@code username} and {@code password}; the
 *       application's migrations and Workrow's run on it at start, and it is dropped when the class's
 *       context closes, after the class;</li>
 *   <li>the workers do not start ({@code workrow.auto-startup=false}): jobs run when the test calls
 *       {@link WorkrowTester#drain(String)}, in the test's thread, unless {@link #startWorkers()};</li>
 *   <li>a {@link WorkrowTester} bean asserts what was enqueued and drains queues.</li>
 * </ul>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ContextCustomizerFactories(WorkrowTestContextCustomizerFactory.class)
@TestExecutionListeners(listeners = WorkrowTestContextCloser.class,
        mergeMode = TestExecutionListeners.MergeMode.MERGE_WITH_DEFAULTS)
public @interface WorkrowTest {

    /**
     * Whether the workers start with the context and run jobs in the background, as in production:
     * for end-to-end tests. Off by default; {@link WorkrowTester#drain(String)} needs it off.
     */
    boolean startWorkers() default false;
}

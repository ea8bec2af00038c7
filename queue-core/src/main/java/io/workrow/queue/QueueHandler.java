package io.workrow.queue;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.aot.hint.annotation.Reflective;

/**
 * Marks a bean method as the handler of a queue (with the Spring Boot starter). The method takes
 * the payload, whose declared type (generics included) decides how the stored JSON is read, and
 * optionally a {@link JobContext}:
 *
 * <pre>{@code
 * @QueueHandler("send-receipt")
 * void send(ReceiptRequest request, JobContext job) { ... }
 * }</pre>
 *
 * Returning normally completes the job; throwing fails the attempt; {@link DiscardJobException}
 * sends it to {@code dead} at once. A queue has exactly one handler.
 *
 * <p>Spring's AOT processing registers the method, its payload type and its result type for
 * reflection ({@code QueueHandlerReflectiveProcessor}), so handlers work in a native image as they are.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective(QueueHandlerReflectiveProcessor.class)
public @interface QueueHandler {

    /** The queue this method handles. */
    String value();

    /**
     * Whether to run the handler and the job's fenced completion in one transaction, so the
     * handler's writes to the same database and the completion commit together or not at all
     * (a lost lease rolls the handler's writes back). The transaction stays open while the
     * handler runs and holds back vacuum meanwhile: keep such handlers short.
     */
    boolean transactional() default false;
}

package io.workrow.queue.benchmark.compare;

import io.workrow.queue.QueueHandler;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Workrow worker as users deploy one: a Spring Boot application on the starter, no web server,
 * one handler for the queue {@code bench}. {@link CompareBenchmark} starts it as its own JVM with
 * {@code workrow.*} properties on the command line and {@code bench.handler=noop|sleep}.
 */
@SpringBootApplication
public class WorkrowWorkerApplication {

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(WorkrowWorkerApplication.class, args);
        context.getBean(WorkerProtocol.class)
                .runUntilStdinCloses(() -> SpringApplication.exit(context));
    }

    @Bean
    WorkerProtocol workerProtocol(@Value("${bench.handler:noop}") String handler) {
        return new WorkerProtocol(handler);
    }

    @Bean
    BenchHandler benchHandler(WorkerProtocol protocol) {
        return new BenchHandler(protocol);
    }

    /** The queue's handler. */
    static final class BenchHandler {

        private final WorkerProtocol protocol;

        BenchHandler(WorkerProtocol protocol) {
            this.protocol = protocol;
        }

        @QueueHandler("bench")
        void handle(Tick tick) {
            protocol.handle(tick.t());
        }
    }
}

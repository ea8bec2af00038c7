package io.workrow.queue.test.app;

import io.workrow.queue.JobContext;
import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.QueueHandler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Greets people: {@link #greetLater} enqueues, in the caller's transaction, a {@code greet} job
 * that {@link #greet} runs. A greeting for {@code nobody} fails. {@link #thankAfter} enqueues a
 * {@code thank} job that waits for a greeting.
 */
@Service
public class Greeter {

    private final JobQueue jobQueue;
    private final JdbcTemplate jdbc;
    private final List<String> threads = new CopyOnWriteArrayList<>();

    Greeter(JobQueue jobQueue, JdbcTemplate jdbc) {
        this.jobQueue = jobQueue;
        this.jdbc = jdbc;
    }

    @Transactional
    public long greetLater(String name, Duration delay) {
        JobRequest request = JobRequest.of("greet", new Greeting(name, "hello " + name))
                .partitionKey("person:" + name).idempotencyKey("greet-" + name);
        return jobQueue.enqueue(delay.isZero() ? request : request.delay(delay));
    }

    @QueueHandler("greet")
    void greet(Greeting greeting, JobContext job) {
        threads.add(Thread.currentThread().getName());
        if (greeting.name().equals("nobody")) {
            throw new IllegalArgumentException("nobody to greet");
        }
        jdbc.update("INSERT INTO greeted (name) VALUES (?)", greeting.name());
    }

    /** A thank-you for {@code name}, run once the greeting {@code greetingId} has completed. */
    @Transactional
    public long thankAfter(long greetingId, String name) {
        return jobQueue.enqueue(JobRequest.of("thank", new Greeting(name, "thanks " + name)).after(greetingId));
    }

    @QueueHandler("thank")
    String thank(Greeting greeting) {
        threads.add(Thread.currentThread().getName());
        return greeting.text();
    }

    /** The threads the handler ran on, in order. */
    public List<String> handlerThreads() {
        return threads;
    }

    public boolean greeted(String name) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM greeted WHERE name = ?)",
                Boolean.class, name));
    }
}

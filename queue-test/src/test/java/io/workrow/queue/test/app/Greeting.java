package io.workrow.queue.test.app;

/** The payload of a {@code greet} job. */
public record Greeting(String name, String text) {
}

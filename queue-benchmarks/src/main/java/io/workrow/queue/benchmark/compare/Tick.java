package io.workrow.queue.benchmark.compare;

/** Every benchmark job's payload: its number and its enqueue time in epoch milliseconds. */
public record Tick(long n, double t) {
}

package io.workrow.queue.faults;

/** A scenario that cannot run against this server or machine, and why (the line says so instead of figures). */
final class ScenarioUnavailable extends RuntimeException {

    ScenarioUnavailable(String reason) {
        super(reason);
    }
}

package io.workrow.queue.worker;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The jobs a runtime holds from claim until their outcome is recorded. The poller adds; only the
 * {@link ResultWriter} removes, once it has recorded an outcome, so an entry here is a lease this
 * runtime still owes an answer for: the {@link LeaseKeeper} renews exactly these.
 */
final class InFlightJobs {

    private final ConcurrentHashMap<Long, RunningJob> held = new ConcurrentHashMap<>();

    void add(RunningJob job) {
        held.put(job.id(), job);
    }

    void remove(long id) {
        held.remove(id);
    }

    /** The entry for job {@code id}, or {@code null} when this runtime does not hold it. */
    RunningJob get(long id) {
        return held.get(id);
    }

    int size() {
        return held.size();
    }

    boolean isEmpty() {
        return held.isEmpty();
    }

    List<RunningJob> snapshot() {
        return List.copyOf(held.values());
    }
}

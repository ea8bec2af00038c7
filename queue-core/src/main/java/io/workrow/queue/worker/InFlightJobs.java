package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimedPosition;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The runs this runtime holds from claim until their outcome is recorded. The poller adds; only
 * the {@link ResultWriter} removes, once it has recorded an outcome, so an entry here is a lease
 * this runtime still owes an answer for: the {@link LeaseKeeper} renews exactly these.
 *
 * <p>An entry belongs to one run, keyed by its {@link Fence} (every claim draws a new token), not
 * by the job's id: a job whose lease this node lost may be claimed again here while its old run's
 * handler still runs, and the old run's end must not remove the new run's entry, whose lease would
 * then go unrenewed.
 */
final class InFlightJobs {

    private final ConcurrentHashMap<Fence, RunningJob> runs = new ConcurrentHashMap<>();

    void add(RunningJob run) {
        runs.put(run.fence(), run);
    }

    /** Ends {@code run}'s entry, and only its: a later run of the same job keeps its own. */
    void remove(RunningJob run) {
        runs.remove(run.fence(), run);
    }

    /** Whether {@code run} still waits for its outcome to be recorded. */
    boolean holds(RunningJob run) {
        return runs.get(run.fence()) == run;
    }

    /** The runs of job {@code id} held here: usually none or one, two while a lost run winds down. */
    List<RunningJob> runsOf(long id) {
        return runs.values().stream().filter(run -> run.id() == id).toList();
    }

    int size() {
        return runs.size();
    }

    boolean isEmpty() {
        return runs.isEmpty();
    }

    List<RunningJob> snapshot() {
        return List.copyOf(runs.values());
    }
}

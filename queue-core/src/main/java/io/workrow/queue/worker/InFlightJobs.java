package io.workrow.queue.worker;

import io.workrow.queue.store.ClaimedJob;
import io.workrow.queue.store.HeldJob;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The jobs a runtime holds from claim until their result is written: what shutdown hands back
 * when handlers do not finish in time.
 */
final class InFlightJobs {

    private final ConcurrentHashMap<Long, HeldJob> held = new ConcurrentHashMap<>();

    void add(ClaimedJob job) {
        held.put(job.id(), new HeldJob(job.id(), job.leaseToken()));
    }

    void remove(long id) {
        held.remove(id);
    }

    int size() {
        return held.size();
    }

    List<HeldJob> snapshot() {
        return List.copyOf(held.values());
    }
}

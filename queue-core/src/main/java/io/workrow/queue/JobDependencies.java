package io.workrow.queue;

import java.util.List;

/**
 * What a job waits for and what waits for it, as {@link QueueAdmin#dependencies(long)} reads it.
 *
 * @param waitsFor the jobs it was enqueued to wait for, in the order named, each with its status
 *     now (at most {@value QueueAdmin#DEPENDENCIES_LISTED}); empty for a job that waited for none
 * @param waitedOnBy the jobs still waiting for it (their edge to it not yet used up), lowest id
 *     first (at most {@value QueueAdmin#DEPENDENCIES_LISTED})
 * @param waitedOnByCount how many jobs still wait for it, all of them counted
 */
public record JobDependencies(long id, List<Link> waitsFor, List<Link> waitedOnBy, long waitedOnByCount) {

    public JobDependencies {
        waitsFor = List.copyOf(waitsFor);
        waitedOnBy = List.copyOf(waitedOnBy);
    }

    /**
     * One job at the other end.
     *
     * @param status its status now, or {@code null} when it is past retention
     * @param settled whether any end of it counts ({@code afterSettled}), or only a completion ({@code after})
     */
    public record Link(long id, String queue, JobStatus status, boolean settled) {
    }
}

package io.workrow.queue.store;

import io.workrow.queue.JobStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The claim statements on the one-row-per-job layout ({@link RowPerJobStore}): every job is a claim of
 * its own, its lease token the claim's token and its position 1. A write {@code RowPerJobStore} skipped
 * because the row was locked is told apart from a lost lease by the row's holder
 * ({@link RowPerJobStore#holders}), as {@link EndResult.Verdict#BUSY}.
 */
public final class RowPerJobClaims implements ClaimStore {

    private final RowPerJobStore store;
    /** A batch of several kinds of end is written in one transaction: all of it counts, or none. */
    private final TransactionTemplate together;

    public RowPerJobClaims(RowPerJobStore store) {
        this.store = store;
        this.together = new TransactionTemplate(new DataSourceTransactionManager(store.dataSource()));
    }

    @Override
    public List<ClaimedPosition> claim(String queue, String worker, int limit, Duration lease, boolean probes) {
        return positions(store.claim(queue, worker, limit, lease, probes));
    }

    @Override
    public List<ClaimedPosition> claimOrdered(String queue, String worker, int limit, Duration lease, boolean probes,
            int[] buckets, boolean skipFailed) {
        return positions(store.claimOrdered(queue, worker, limit, lease, probes, buckets, skipFailed));
    }

    @Override
    public List<ClaimedPosition> claimWeighted(String queue, String worker, int limit, Duration lease,
            boolean probes) {
        return positions(store.claimWeighted(queue, worker, limit, lease, probes));
    }

    @Override
    public List<ClaimedPosition> claimBurst(String queue, String worker, int limit, Duration lease, boolean probes,
            int ratePerMinute) {
        return positions(store.claimBurst(queue, worker, limit, lease, probes, ratePerMinute));
    }

    @Override
    public List<ClaimedPosition> claimSpaced(String queue, String worker, int limit, Duration lease, boolean probes,
            int ratePerMinute) {
        return positions(store.claimSpaced(queue, worker, limit, lease, probes, ratePerMinute));
    }

    @Override
    public Map<String, Integer> promoteScheduled(int limit) {
        return store.promoteScheduled(limit);
    }

    /**
     * Completions, failures and releases each in one statement, all in one transaction when there
     * are several kinds: a batch whose failures could not be written must not leave its completions
     * written, or sending it again would find them finished and report their leases lost. A job
     * skipped because its row was locked is {@code BUSY}; one refused because it was cancelled is
     * refused with the status {@code CANCELLED}. A let-go ({@code EXPIRED}) writes
     * nothing: the job's lease, no longer renewed, expires and the sweeper recovers it by its
     * queue's rule, so it is accepted with the job still {@code RUNNING}.
     */
    @Override
    public Map<PositionEnd, EndResult> endMany(Collection<PositionEnd> ends) {
        List<PositionEnd> completions = new ArrayList<>();
        List<PositionEnd> failures = new ArrayList<>();
        List<PositionEnd> releases = new ArrayList<>();
        Map<PositionEnd, EndResult> results = new LinkedHashMap<>();
        for (PositionEnd end : ends) {
            switch (end.kind()) {
                case COMPLETED -> completions.add(end);
                case FAILED, DISCARDED -> failures.add(end);
                case RELEASED, INTERRUPTED -> releases.add(end);
                case EXPIRED -> results.put(end, new EndResult(EndResult.Verdict.ACCEPTED, JobStatus.RUNNING));
            }
        }
        int kinds = (completions.isEmpty() ? 0 : 1) + (failures.isEmpty() ? 0 : 1) + (releases.isEmpty() ? 0 : 1);
        Map<HeldJob, JobStatus> accepted = kinds > 1
                ? together.execute(status -> write(completions, failures, releases))
                : write(completions, failures, releases);
        List<PositionEnd> skipped = new ArrayList<>();
        for (PositionEnd end : ends) {
            JobStatus status = accepted.get(held(end));
            if (status != null) {
                results.put(end, new EndResult(EndResult.Verdict.ACCEPTED, status));
            } else if (!results.containsKey(end)) {
                skipped.add(end);
            }
        }
        if (!skipped.isEmpty()) {
            Map<Long, JobHolder> holders = store.holders(skipped.stream().map(PositionEnd::id).toList());
            for (PositionEnd end : skipped) {
                JobHolder holder = holders.get(end.id());
                if (holder != null && holder.heldBy(end.token())) {
                    results.put(end, new EndResult(EndResult.Verdict.BUSY, null));
                } else {
                    results.put(end, new EndResult(EndResult.Verdict.REFUSED,
                            holder != null && holder.status() == JobStatus.CANCELLED ? JobStatus.CANCELLED : null));
                }
            }
        }
        return results;
    }

    private Map<HeldJob, JobStatus> write(List<PositionEnd> completions, List<PositionEnd> failures,
            List<PositionEnd> releases) {
        Map<HeldJob, JobStatus> accepted = new HashMap<>();
        for (HeldJob completed : store.completeMany(completions.stream().map(RowPerJobClaims::held).toList())) {
            accepted.put(completed, JobStatus.COMPLETED);
        }
        accepted.putAll(store.failMany(failures.stream().map(end -> new JobFailure(end.id(), end.token(), end.error(),
                end.retryDelay(), end.kind() == PositionEnd.Kind.DISCARDED)).toList()));
        accepted.putAll(store.releaseMany(releases.stream().map(end -> new JobRelease(end.id(), end.token(),
                end.kind() == PositionEnd.Kind.RELEASED)).toList()));
        return accepted;
    }

    @Override
    public boolean completeInTransaction(ClaimedPosition job) {
        return store.complete(held(job));
    }

    /** A job missing from the renewal whose row says it was cancelled has its position dropped. */
    @Override
    public Map<Long, Set<Integer>> renewLeases(String worker, Collection<ClaimLease> claims, Duration vouch) {
        List<LeaseRenewal> renewals = new ArrayList<>();
        for (ClaimLease claim : claims) {
            for (ClaimedPosition job : claim.open()) {
                renewals.add(new LeaseRenewal(job.id(), claim.token(), claim.lease()));
            }
        }
        Map<Long, Set<Integer>> renewed = new HashMap<>();
        for (HeldJob job : store.renewLeases(worker, renewals)) {
            renewed.put(job.leaseToken(), Set.of());
        }
        List<LeaseRenewal> missing = renewals.stream().filter(renewal -> !renewed.containsKey(renewal.leaseToken()))
                .toList();
        if (!missing.isEmpty()) {
            Map<Long, JobHolder> holders = store.holders(missing.stream().map(LeaseRenewal::id).toList());
            for (LeaseRenewal renewal : missing) {
                JobHolder holder = holders.get(renewal.id());
                if (holder != null && holder.status() == JobStatus.CANCELLED) {
                    renewed.put(renewal.leaseToken(), Set.of(1));
                }
            }
        }
        return renewed;
    }

    @Override
    public Set<Long> stillHeld(Collection<ClaimLease> claims) {
        Map<Long, Long> tokensById = new HashMap<>();
        for (ClaimLease claim : claims) {
            for (ClaimedPosition job : claim.open()) {
                tokensById.put(job.id(), claim.token());
            }
        }
        Set<Long> held = new HashSet<>();
        store.holders(tokensById.keySet()).forEach((id, holder) -> {
            if (holder.heldBy(tokensById.get(id))) {
                held.add(holder.leaseToken());
            }
        });
        return held;
    }

    @Override
    public void forgetLeaseHolder(String worker) {
        store.forgetLeaseHolder(worker);
    }

    @Override
    public boolean saveStep(ClaimedPosition job, String step) {
        return store.saveStep(held(job), step);
    }

    @Override
    public boolean extendLease(ClaimedPosition job, Duration lease) {
        return store.extendLease(held(job), lease);
    }

    @Override
    public RowPerJobClaims on(DataSource dataSource) {
        return new RowPerJobClaims(store.on(dataSource));
    }

    /** Every job is already fenced alone. */
    @Override
    public RowPerJobClaims perJob() {
        return this;
    }

    private static List<ClaimedPosition> positions(List<ClaimedJob> jobs) {
        return jobs.stream().map(job -> new ClaimedPosition(job.leaseToken(), 1, job.id(), job.queue(),
                job.partitionKey(), job.idempotencyKey(), job.payloadJson(), job.headersJson(), job.attempt(),
                job.maxAttempts(), 0, job.step(), job.runAt(), null, null)).toList();
    }

    private static HeldJob held(PositionEnd end) {
        return new HeldJob(end.id(), end.token());
    }

    private static HeldJob held(ClaimedPosition job) {
        return new HeldJob(job.id(), job.token());
    }
}

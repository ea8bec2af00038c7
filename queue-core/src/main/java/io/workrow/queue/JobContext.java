package io.workrow.queue;

import java.time.Duration;
import java.time.Instant;

/**
 * The running job as its handler sees it. Methods that write to the job are fenced by the lease:
 * they throw {@link JobLeaseLostException} when this worker no longer holds the job. They commit
 * on their own, outside any transaction the handler has open.
 *
 * <p>The runtime renews the lease while the handler runs. When a renewal finds the job gone (the
 * lease expired while this JVM was frozen or cut off, and the sweeper gave it to another worker)
 * or cancelled, the handler's thread is interrupted and {@link #isLeaseLost()} turns true; what
 * the handler returns then is not recorded. Long handlers that do not block interruptibly should
 * check it between steps.
 */
public interface JobContext {

    long id();

    String queue();

    /** The attempt now running, counting from 1. */
    int attempt();

    int maxAttempts();

    /** The partition key, or {@code null}. */
    String partitionKey();

    /**
     * A key that is the same on every attempt of this job: the enqueued idempotency key, or one
     * derived from the queue and id. Pass it to downstream APIs so a repeated attempt is not a
     * repeated effect.
     */
    String idempotencyKey();

    /** When the job became due. */
    Instant runAt();

    /**
     * Moves the lease expiry to {@code lease} from now, and has every later renewal of this run
     * ask for at least that long. Renewal is automatic; this is for a run that wants a longer
     * lease than its queue's.
     */
    void extendLease(Duration lease);

    /** The step saved by an earlier attempt, or {@code null}: where a multi-step job resumes. */
    String step();

    /**
     * Records that the job reached {@code step}, so a retry can resume from there. It commits at
     * once and stays even when the handler then throws or its transaction rolls back.
     */
    void saveStep(String step);

    /**
     * Whether this worker no longer holds the job: its lease was lost or it was cancelled. The
     * handler's thread has been interrupted; stop working, nothing more is recorded.
     */
    boolean isLeaseLost();

    /** Whether an operator cancelled the job while it ran (then {@link #isLeaseLost()} is true too). */
    boolean isCancelled();

    /**
     * The results of the jobs this one waited for ({@code JobRequest.after}, {@code afterSettled}),
     * read as {@code type}, by job id in the order they were named: only those that completed with
     * a result still retained (a job waited for through {@code afterSettled} may have ended without
     * one). Empty for a job that waited for none. Read when called, not at the claim.
     *
     * @throws io.workrow.queue.payload.PayloadDecodingException when a stored result is not a
     *     valid {@code type}
     */
    <T> java.util.Map<Long, T> dependencyResults(Class<T> type);

    /** The batch this job belongs to ({@code JobQueue.batch()}), as a member or a callback; empty for none. */
    java.util.OptionalLong batchId();
}

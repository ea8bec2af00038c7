package io.workrow.queue;

import java.time.Duration;
import java.time.Instant;

/**
 * The running job as its handler sees it. Methods that write to the job are fenced by the lease:
 * they throw {@link JobLeaseLostException} when this worker no longer holds the job.
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

    /** Moves the lease expiry to {@code lease} from now (a heartbeat for long work). */
    void extendLease(Duration lease);

    /** The step saved by an earlier attempt, or {@code null}: where a multi-step job resumes. */
    String step();

    /** Records that the job reached {@code step}, so a retry can resume from there. */
    void saveStep(String step);
}

package io.workrow.queue.store;

import io.workrow.queue.JobStatus;

/**
 * What became of one end sent to {@link ClaimStore#endMany}.
 *
 * @param status the job's status after an end accepted now; for a refused end, {@code CANCELLED}
 *     when the store knows the job was cancelled; {@code null} otherwise
 */
public record EndResult(Verdict verdict, JobStatus status) {

    /** Whether the end took effect, and if not, why. */
    public enum Verdict {
        /** Accepted by this statement. */
        ACCEPTED,
        /** Accepted by an earlier send of the same end whose reply was lost: nothing more to do. */
        ACCEPTED_BEFORE,
        /** The claim row was locked by another session: send it again. */
        BUSY,
        /** The lease was lost (the claim swept) or the job cancelled: the end must not count. */
        REFUSED
    }

    /** True when the end counts, now or from an earlier send. */
    public boolean counted() {
        return verdict == Verdict.ACCEPTED || verdict == Verdict.ACCEPTED_BEFORE;
    }
}

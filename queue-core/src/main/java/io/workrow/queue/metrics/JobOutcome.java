package io.workrow.queue.metrics;

import java.util.Locale;

/** How a handler run ended, as recorded: the {@code outcome} tag of {@code workrow.jobs.duration}. */
public enum JobOutcome {

    /** The handler returned and the completion was recorded. */
    SUCCESS,
    /** The handler threw; the attempt was recorded as failed (retry or dead). */
    FAILURE,
    /** The handler discarded the job (or its payload was unreadable): dead at once. */
    DISCARDED,
    /** The worker lost the lease before it could record the result; nothing was recorded. */
    LEASE_LOST,
    /** An operator cancelled the job while its handler ran; the handler was interrupted. */
    CANCELLED,
    /** Shutdown interrupted the handler (or it never started) and the job went back to pending. */
    RELEASED,
    /** The handler snoozed the job ({@code SnoozeJobException}): it runs again later, no attempt spent. */
    SNOOZED,
    /** The job reached its worker past its deadline ({@code JobRequest.expiresAt}): cancelled, never started. */
    EXPIRED,
    /**
     * The outcome could not be written before the runtime stopped (the database stayed
     * unreachable): the lease expires and the job runs again.
     */
    UNRECORDED;

    /**
     * The tag value: {@code success}, {@code failure}, {@code discarded}, {@code lease_lost},
     * {@code cancelled}, {@code released}, {@code snoozed}, {@code expired}, {@code unrecorded}.
     */
    public String tagValue() {
        return name().toLowerCase(Locale.ROOT);
    }
}

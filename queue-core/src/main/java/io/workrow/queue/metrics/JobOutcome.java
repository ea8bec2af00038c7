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
    LEASE_LOST;

    /** The tag value: {@code success}, {@code failure}, {@code discarded}, {@code lease_lost}. */
    public String tagValue() {
        return name().toLowerCase(Locale.ROOT);
    }
}

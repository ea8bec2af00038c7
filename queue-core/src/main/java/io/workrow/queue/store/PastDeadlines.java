package io.workrow.queue.store;

import java.util.List;

/**
 * What one pass over passed deadlines did ({@link JobStore#cancelPastDeadline}).
 *
 * @param passed the passed deadlines taken and deleted, whatever had become of their jobs: fewer
 *     than asked means none is left, or some were kept for jobs another transaction held locked
 * @param cancelled the jobs among them that still waited unstarted, now cancelled
 */
public record PastDeadlines(int passed, List<MovedJob> cancelled) {

    public PastDeadlines {
        cancelled = List.copyOf(cancelled);
    }
}

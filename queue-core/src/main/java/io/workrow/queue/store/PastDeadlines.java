package io.workrow.queue.store;

import java.util.List;

/**
 * What one pass over passed deadlines did ({@link JobStore#cancelPastDeadline}).
 *
 * @param taken the passed deadlines taken, each deleted or put off to be looked at again: fewer
 *     than asked means none is left
 * @param cancelled the jobs among them that still waited unstarted, now cancelled, each once
 */
public record PastDeadlines(int taken, List<MovedJob> cancelled) {

    public PastDeadlines {
        cancelled = List.copyOf(cancelled);
    }
}

package io.workrow.queue.metrics;

import io.workrow.queue.store.ClaimedJob;

/**
 * Wraps each handler run, for tracing: {@link #start(ClaimedJob)} before the handler, the
 * returned {@link Run} closed after it. {@link #NOOP} does nothing; with Micrometer Observation,
 * {@link ObservationJobObserver} makes each run a {@code workrow.job} observation whose parent is
 * the trace that enqueued the job.
 */
public interface JobObserver {

    /** Observes nothing. */
    JobObserver NOOP = job -> Run.NOOP;

    /** Called on the handler's thread before it runs; the run is current until closed. */
    Run start(ClaimedJob job);

    /** One observed handler run. */
    interface Run extends AutoCloseable {

        /** A run that records nothing. */
        Run NOOP = new Run() {
        };

        /** How the run ended. */
        default void outcome(JobOutcome outcome) {
        }

        /** The handler's exception, when it threw. */
        default void error(Throwable error) {
        }

        /** Ends the run on the thread that started it. */
        @Override
        default void close() {
        }
    }
}

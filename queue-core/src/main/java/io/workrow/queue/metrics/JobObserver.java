package io.workrow.queue.metrics;

import io.workrow.queue.store.ClaimedPosition;

/**
 * Wraps each handler run, for tracing: {@link #start(ClaimedPosition)} before the handler, the
 * returned {@link Run} left by the handler's thread after it, and closed once its outcome is
 * recorded. {@link #NOOP} does nothing; with Micrometer Observation,
 * {@link ObservationJobObserver} makes each run a {@code workrow.job} observation whose parent is
 * the trace that enqueued the job.
 */
public interface JobObserver {

    /** Observes nothing. */
    JobObserver NOOP = job -> Run.NOOP;

    /** Called on the handler's thread before it runs; the run is current until closed. */
    Run start(ClaimedPosition job);

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

        /**
         * The handler's thread is done with the run: whatever it made current there (a tracing
         * scope) is closed, on the thread that started the run. The run itself goes on until
         * {@link #close()}, when its outcome is known.
         */
        default void leave() {
        }

        /** Ends the run, after {@link #leave()}; may be called on another thread. */
        @Override
        default void close() {
        }
    }
}

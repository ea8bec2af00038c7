package io.workrow.queue.worker;

import io.workrow.queue.metrics.JobObserver;
import io.workrow.queue.metrics.JobOutcome;
import io.workrow.queue.store.ClaimedPosition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one catch at the edge of what an application plugs into a run besides its handler: the
 * {@link ErrorDescriber} and the {@link JobObserver}. Whatever they throw, an {@code Error}
 * included, is logged and replaced, so a run always reaches the result writer and its in-flight
 * entry always ends: a redacting describer that trips over an exception without a message must
 * not leave its job running for as long as the JVM lives. The handler and the payload codec are
 * caught where their failure has a meaning of its own, in {@link JobExecutor}.
 */
final class UserCode {

    private static final Logger log = LoggerFactory.getLogger(UserCode.class);

    private UserCode() {
    }

    /**
     * {@code describer}, falling back to the exception's class name, and nothing of its message,
     * when it throws or returns null: the describer exists to redact, so its failure must not
     * leak what it would have hidden.
     */
    static ErrorDescriber guarded(ErrorDescriber describer) {
        return error -> {
            try {
                String text = describer.describe(error);
                if (text != null) {
                    return text;
                }
                log.warn("The error describer returned null for {}; last_error records the class name only",
                        error.getClass().getName());
            } catch (Throwable failure) {
                log.warn("The error describer failed on {}; last_error records the class name only",
                        error.getClass().getName(), failure);
            }
            return error.getClass().getName();
        };
    }

    /**
     * {@code error.toString()} for a log line, or its class name when even that throws (an
     * exception whose {@code getMessage} does).
     */
    static String text(Throwable error) {
        try {
            return error.toString();
        } catch (Throwable failure) {
            return error.getClass().getName();
        }
    }

    /** {@code observer}, observing nothing for a run whose start throws and ignoring what its run's calls throw. */
    static JobObserver guarded(JobObserver observer) {
        if (observer == JobObserver.NOOP) {
            return observer; // nothing to guard, and no wrapper per run
        }
        return job -> {
            try {
                JobObserver.Run run = observer.start(job);
                return run == null ? JobObserver.Run.NOOP : new GuardedRun(run, job);
            } catch (Throwable failure) {
                log.warn("job={} queue={}: the job observer failed to start observing it; the job runs unobserved",
                        job.id(), job.queue(), failure);
                return JobObserver.Run.NOOP;
            }
        };
    }

    private record GuardedRun(JobObserver.Run run, ClaimedPosition job) implements JobObserver.Run {

        @Override
        public void outcome(JobOutcome outcome) {
            call("outcome", () -> run.outcome(outcome));
        }

        @Override
        public void error(Throwable error) {
            call("error", () -> run.error(error));
        }

        @Override
        public void leave() {
            call("leave", run::leave);
        }

        @Override
        public void close() {
            call("close", run::close);
        }

        private void call(String method, Runnable call) {
            try {
                call.run();
            } catch (Throwable failure) {
                log.warn("job={} queue={}: the job observer's {} failed; the job's outcome is unaffected", job.id(),
                        job.queue(), method, failure);
            }
        }
    }
}

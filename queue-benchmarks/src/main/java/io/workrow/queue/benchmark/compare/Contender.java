package io.workrow.queue.benchmark.compare;

import java.time.Duration;
import java.util.List;

/** A queue under measurement, driven by {@link CompareBenchmark} against the same database. */
interface Contender {

    /** How a drain's handlers behave. */
    enum Handler {
        NO_OP("noop"), SLEEP_5_MS("sleep");

        final String argument;

        Handler(String argument) {
            this.argument = argument;
        }
    }

    /** How an idle worker learns of a new job. */
    enum Pickup {
        LISTEN_NOTIFY, POLL
    }

    String name();

    /** Creates the contender's tables in the benchmark database. */
    void prepare();

    /** Deletes every job, so the next measurement starts from an empty table. */
    void empty();

    /** Rows/s for {@code jobs} single enqueues from {@code producers} concurrent callers. */
    double enqueueSingle(int jobs, int producers);

    /** Rows/s for {@code jobs} rows enqueued {@code chunk} per call, one call after another. */
    double enqueueBulk(int jobs, int chunk);

    /** The numbers of worker processes its drains run with: its best, or (Workrow) each shape measured. */
    List<Integer> drainProcesses();

    /** Starts {@code processes} workers draining with {@code handler}, in its best configuration for that. */
    List<WorkerProcess> startDrainWorkers(Handler handler, int processes);

    /** The pick-up modes it offers. */
    List<Pickup> pickups();

    /** Starts one idle worker that learns of new jobs by {@code pickup}. */
    WorkerProcess startIdleWorker(Pickup pickup);

    /** Enqueues {@code jobs} single jobs, one every {@code interval}. */
    void trickle(int jobs, Duration interval);

    /** Jobs neither finished nor failed yet. */
    long unfinished();

    /** Its configuration in each measurement, for the table's notes. */
    String configuration();
}

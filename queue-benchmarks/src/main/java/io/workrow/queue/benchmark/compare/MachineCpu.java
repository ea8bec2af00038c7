package io.workrow.queue.benchmark.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The machine's busy CPU time and this process's own, read together, so that a measurement can
 * say what everything else used meanwhile. On this benchmark's machine everything else is the
 * database (its backends, autovacuum, WAL writer and checkpointer), the kernel's work for it and
 * for the workers' sockets, and whatever else happens to run; the workers report their own CPU,
 * so that is taken out too.
 *
 * <p>Linux only: the machine's time comes from the first line of {@code /proc/stat}, in the
 * kernel's USER_HZ of 100 ticks a second, which every Linux on x86 and ARM reports in. Busy is
 * user, nice, system, irq and softirq time. Not busy: idle, I/O wait, and steal (time the
 * hypervisor gave other guests, not work done here); guest time is already inside user.
 */
record MachineCpu(double busyMillis, double ownMillis, double atMillis, int cores) {

    private static final Path STAT = Path.of("/proc/stat");
    private static final double MILLIS_PER_TICK = 10;
    private static final int USER = 1;
    private static final int NICE = 2;
    private static final int SYSTEM = 3;
    private static final int IRQ = 6;
    private static final int SOFTIRQ = 7;

    /** Whether the reason there are no figures has been said. */
    private static volatile boolean warned;

    /** Now, or empty (said once on standard error) where {@code /proc/stat} cannot be read. */
    static Optional<MachineCpu> now() {
        try {
            List<String> lines = Files.readAllLines(STAT);
            String[] fields = lines.get(0).trim().split("\\s+");
            // After the machine's line, one per core: cpu0, cpu1, ...
            int cores = (int) lines.stream().skip(1).takeWhile(line -> line.startsWith("cpu")).count();
            long ticks = 0;
            for (int field : new int[] {USER, NICE, SYSTEM, IRQ, SOFTIRQ}) {
                ticks += Long.parseLong(fields[field]);
            }
            return Optional.of(new MachineCpu(ticks * MILLIS_PER_TICK, WorkerProtocol.cpuNanos() / 1e6,
                    System.nanoTime() / 1e6, cores));
        } catch (IOException | RuntimeException e) {
            if (!warned) {
                warned = true;
                System.err.println("No database CPU figures: " + STAT + " could not be read (" + e + ")");
            }
            return Optional.empty();
        }
    }

    /**
     * The CPU time, in milliseconds, that neither this process nor the workers (who used
     * {@code workersMillis} meanwhile) spent between {@code earlier} and this reading: on this
     * benchmark's machine, the database's.
     */
    double databaseMillisSince(MachineCpu earlier, double workersMillis) {
        return (busyMillis - earlier.busyMillis) - ownMillisSince(earlier) - workersMillis;
    }

    /**
     * How busy the machine's cores were on average between {@code earlier} and this reading, in
     * percent of all of them: how much of the machine a drain's CPU per job turned into its rate
     * (a rate is the busy cores ÷ the CPU per job, the harness's own included).
     */
    double percentBusySince(MachineCpu earlier) {
        return 100 * (busyMillis - earlier.busyMillis) / (atMillis - earlier.atMillis) / cores;
    }

    /** This process's own CPU time since {@code earlier}, in milliseconds. */
    double ownMillisSince(MachineCpu earlier) {
        return ownMillis - earlier.ownMillis;
    }
}

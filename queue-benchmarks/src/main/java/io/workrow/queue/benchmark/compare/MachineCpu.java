package io.workrow.queue.benchmark.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The machine's busy CPU time and this process's own, read together, so that a measurement can
 * say what everything else used meanwhile. On this benchmark's machine everything else is the
 * database (its backends, autovacuum, WAL writer and checkpointer) and the kernel's work for
 * them; the workers report their own CPU, so that is taken out too.
 *
 * <p>Linux only: the machine's time comes from the first line of {@code /proc/stat} (user, nice,
 * system, irq, softirq and steal clock ticks; idle and I/O wait are not busy), in the kernel's
 * USER_HZ of 100 ticks a second, which every Linux on x86 and ARM reports in.
 */
record MachineCpu(double busyMillis, double ownMillis) {

    private static final Path STAT = Path.of("/proc/stat");
    private static final double MILLIS_PER_TICK = 10;

    /** Now, or empty where there is no {@code /proc/stat}. */
    static Optional<MachineCpu> now() {
        if (!Files.isReadable(STAT)) {
            return Optional.empty();
        }
        try (var lines = Files.lines(STAT)) {
            String[] fields = lines.findFirst().orElseThrow().trim().split("\\s+");
            long ticks = 0;
            // cpu user nice system idle iowait irq softirq steal ...
            for (int field : new int[] {1, 2, 3, 6, 7, 8}) {
                ticks += Long.parseLong(fields[field]);
            }
            double own = ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(0L) / 1e6;
            return Optional.of(new MachineCpu(ticks * MILLIS_PER_TICK, own));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * The CPU time, in milliseconds, that neither this process nor the workers (who used
     * {@code workersMillis} meanwhile) spent between {@code earlier} and this reading.
     */
    double othersSince(MachineCpu earlier, double workersMillis) {
        return (busyMillis - earlier.busyMillis) - (ownMillis - earlier.ownMillis) - workersMillis;
    }

    /** This process's own CPU time since {@code earlier}, in milliseconds. */
    double ownSince(MachineCpu earlier) {
        return ownMillis - earlier.ownMillis;
    }
}

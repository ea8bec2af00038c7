package io.workrow.queue.benchmark.compare;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The worker side of the protocol every contender's process speaks to {@link CompareBenchmark}
 * (the Node peers speak it from {@code peers/protocol.mjs}), one line each on standard output:
 * {@code READY} once its workers run, {@code FIRST <epoch ms>} when the first handler starts,
 * {@code MARK cpuMs=..} (its CPU time since then) whenever standard input sends {@code MARK},
 * {@code COUNT handled=..} (handlers started so far) whenever it sends {@code COUNT}, and,
 * when standard input closes, {@code STATS handled=.. p50=.. p99=.. heapMb=.. rssMb=..} before it
 * exits ({@code p50} and {@code p99}: pick-up delays of the jobs started after the last MARK, if any). Every payload carries its enqueue time, so the handler knows each job's pick-up delay.
 */
public final class WorkerProtocol {

    private static final int MAX_RECORDED = 1_000_000;
    private static final Pattern PEAK_RSS = Pattern.compile("VmHWM:\\s+(\\d+)\\s+kB");

    private final boolean sleep;
    private final AtomicBoolean first = new AtomicBoolean(true);
    private final AtomicInteger handled = new AtomicInteger();
    private final double[] delays = new double[MAX_RECORDED];
    private volatile long cpuAtFirstNanos;
    /** The first job whose delay the report counts: jobs before the last MARK were a warm-up. */
    private volatile int delaysFrom;

    /** {@code handler} is {@code noop} or {@code sleep} (5 ms per job). */
    public WorkerProtocol(String handler) {
        if (!handler.equals("noop") && !handler.equals("sleep")) {
            throw new IllegalArgumentException("handler is noop or sleep, was " + handler);
        }
        this.sleep = handler.equals("sleep");
    }

    public static double nowMillis() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1000.0 + now.getNano() / 1e6;
    }

    /** One job's handler: records its pick-up delay and, for {@code sleep}, takes 5 ms. */
    public void handle(double enqueuedAtMillis) {
        double started = nowMillis();
        if (first.compareAndSet(true, false)) {
            cpuAtFirstNanos = cpuNanos();
            System.out.println("FIRST " + started);
        }
        int index = handled.getAndIncrement();
        if (index < MAX_RECORDED) {
            delays[index] = started - enqueuedAtMillis;
        }
        if (sleep) {
            try {
                TimeUnit.MILLISECONDS.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Prints READY, then waits for standard input to close: reports, runs {@code stop} and exits. */
    public void runUntilStdinCloses(Runnable stop) {
        System.out.println("READY");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("MARK")) {
                    delaysFrom = Math.min(handled.get(), MAX_RECORDED);
                    System.out.println(String.format(Locale.ROOT, "MARK cpuMs=%.0f", cpuSinceFirstMillis()));
                } else if (line.equals("COUNT")) {
                    System.out.println("COUNT handled=" + handled.get());
                }
            }
        } catch (IOException e) {
            // A broken pipe means the orchestrator is gone: stop all the same.
        }
        report();
        stop.run();
        System.exit(0);
    }

    private void report() {
        int count = handled.get();
        double[] sorted = Arrays.copyOfRange(delays, delaysFrom, Math.max(delaysFrom, Math.min(count, MAX_RECORDED)));
        Arrays.sort(sorted);
        System.gc();
        double heapMb = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0;
        System.out.println(String.format(Locale.ROOT, "STATS handled=%d p50=%.2f p99=%.2f heapMb=%.1f rssMb=%.1f",
                count, quantile(sorted, 0.50), quantile(sorted, 0.99), heapMb, peakRssMb()));
        System.out.flush();
    }

    private double cpuSinceFirstMillis() {
        return handled.get() == 0 ? 0 : (cpuNanos() - cpuAtFirstNanos) / 1e6;
    }

    /** This process's CPU time so far (0 where the platform does not say). */
    static long cpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(0L);
    }

    private static double quantile(double[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))];
    }

    private static double peakRssMb() {
        try {
            Matcher matcher = PEAK_RSS.matcher(Files.readString(Path.of("/proc/self/status")));
            return matcher.find() ? Long.parseLong(matcher.group(1)) / 1024.0 : 0;
        } catch (IOException e) {
            return 0;
        }
    }
}

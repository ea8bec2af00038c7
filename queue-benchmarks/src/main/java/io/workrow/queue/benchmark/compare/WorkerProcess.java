package io.workrow.queue.benchmark.compare;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One contender's process seen from {@link CompareBenchmark}: reads the {@link WorkerProtocol}
 * lines from its standard output and writes every other line to its log file.
 */
final class WorkerProcess {

    private final String name;
    private final Process process;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final CountDownLatch finished = new CountDownLatch(1);
    private final AtomicReference<Double> firstStart = new AtomicReference<>();
    private final AtomicReference<String> stats = new AtomicReference<>();
    private final AtomicReference<String> rate = new AtomicReference<>();
    private final BlockingQueue<Double> marks = new LinkedBlockingQueue<>();
    private final BlockingQueue<Long> counts = new LinkedBlockingQueue<>();

    private WorkerProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        Thread reader = new Thread(() -> read(log), name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    static WorkerProcess start(String name, List<String> command, Map<String, String> environment, Path logDirectory) {
        try {
            Files.createDirectories(logDirectory);
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().putAll(environment);
            return new WorkerProcess(name, builder.start(), logDirectory.resolve(name.replace(' ', '-') + ".log"));
        } catch (IOException e) {
            throw new IllegalStateException("Could not start " + name + ": " + command, e);
        }
    }

    /** Runs a one-shot command (an enqueue) to its end and returns what it printed after {@code RATE}, if anything. */
    static double runForRate(String name, List<String> command, Map<String, String> environment, Path logDirectory) {
        WorkerProcess run = start(name, command, environment, logDirectory);
        run.awaitExit(Duration.ofMinutes(10));
        if (run.rate.get() == null) {
            throw new IllegalStateException(name + " printed no RATE; see " + logDirectory);
        }
        return Double.parseDouble(run.rate.get());
    }

    void awaitReady(Duration timeout) {
        await(ready, timeout, "READY");
    }

    /** When this process's first handler started, in epoch milliseconds, if one has. */
    Double firstStart() {
        return firstStart.get();
    }

    /** Asks for the CPU time the process has used since its first job, in milliseconds. */
    double markCpu() {
        return ask("MARK", marks);
    }

    /**
     * Asks how many handlers the process has started, and waits for the answer: the harness
     * follows a drain by these answers rather than by counting rows, which would spend the
     * database's CPU in the window it measures.
     */
    long askHandled() {
        return ask("COUNT", counts);
    }

    private <T> T ask(String command, BlockingQueue<T> answers) {
        try {
            process.getOutputStream().write((command + "\n").getBytes(StandardCharsets.UTF_8));
            process.getOutputStream().flush();
            T answer = answers.poll(30, TimeUnit.SECONDS);
            if (answer == null) {
                throw new IllegalStateException(name + " did not answer " + command);
            }
            return answer;
        } catch (IOException e) {
            throw new IllegalStateException(name + " is gone", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted waiting for " + name, e);
        }
    }

    /** Closes standard input, the signal to report and stop, and returns the report. */
    WorkerReport stop() {
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // Already gone: the missing report says so below.
        }
        awaitExit(Duration.ofMinutes(1));
        String line = stats.get();
        if (line == null) {
            throw new IllegalStateException(name + " exited without its STATS line");
        }
        return WorkerReport.parse(line);
    }

    /** Waits for a one-shot command to end and fails unless it exited with 0. */
    void awaitExitOk() {
        awaitExit(Duration.ofMinutes(10));
        if (process.exitValue() != 0) {
            throw new IllegalStateException(name + " exited with " + process.exitValue());
        }
    }

    private void awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(name + " did not exit within " + timeout);
            }
            finished.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    void kill() {
        process.destroyForcibly();
    }

    private void await(CountDownLatch latch, Duration timeout, String what) {
        try {
            if (!latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " printed no " + what + " within " + timeout
                        + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted waiting for " + name, e);
        }
    }

    private void read(Path log) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter other = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.equals("READY")) {
                    ready.countDown();
                } else if (line.startsWith("FIRST ")) {
                    firstStart.compareAndSet(null, Double.parseDouble(line.substring(6)));
                } else if (line.startsWith("STATS ")) {
                    stats.set(line);
                } else if (line.startsWith("MARK cpuMs=")) {
                    marks.add(Double.parseDouble(line.substring("MARK cpuMs=".length())));
                } else if (line.startsWith("COUNT handled=")) {
                    counts.add(Long.parseLong(line.substring("COUNT handled=".length())));
                } else if (line.startsWith("RATE ")) {
                    rate.set(line.substring(5).trim());
                } else {
                    other.println(line);
                }
            }
        } catch (IOException e) {
            // The process is gone; its absent lines are reported by whoever waits for them.
        } finally {
            finished.countDown();
        }
    }
}

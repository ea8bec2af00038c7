package io.workrow.queue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One {@link FaultWorker} JVM, started as users run one, and the signals the suite sends it:
 * {@code kill -9}, {@code SIGSTOP}/{@code SIGCONT} and {@code SIGTERM}. Its output goes to a log
 * file the suite reads.
 */
final class WorkerJvm {

    private final String name;
    private final Path log;
    private final Process process;

    private WorkerJvm(String name, Path log, Process process) {
        this.name = name;
        this.log = log;
        this.process = process;
    }

    /**
     * Starts {@link FaultWorker} with {@code settings} (property names to values) as its command
     * line and {@code environment} added to this process's.
     */
    static WorkerJvm start(String name, Path logDirectory, Map<String, String> settings,
            Map<String, String> environment) {
        String java = ProcessHandle.current().info().command().orElse("java");
        // C1 only and one GC thread: a scenario starts three or four worker JVMs at once on a few cores,
        // where the optimizing compiler's and the parallel collector's threads slowed every start
        // (12 to 18 s each); the scenarios test what the workers do, not how fast their code runs.
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), FaultWorker.class.getName()));
        settings.forEach((property, value) -> command.add("--" + property + "=" + value));
        try {
            Files.createDirectories(logDirectory);
            Path log = logDirectory.resolve(name + ".log");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            return new WorkerJvm(name, log, process);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start worker " + name, e);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    /** Waits until the worker logs that Workrow started. */
    void awaitStarted(Duration timeout) {
        Waits.until(timeout, name + " to start", () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + ":\n" + log());
            }
            return log().contains("Workrow started");
        });
    }

    String log() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** How many lines of its log contain {@code text}. */
    long logLines(String text) {
        return log().lines().filter(line -> line.contains(text)).count();
    }

    void kill9() {
        signal("KILL");
        awaitExit(Duration.ofSeconds(30));
    }

    void pause() {
        signal("STOP");
    }

    void resume() {
        signal("CONT");
    }

    /** SIGTERM, then waits for the JVM to end: the graceful shutdown users' orchestrators send. */
    int terminate(Duration timeout) {
        signal("TERM");
        return awaitExit(timeout);
    }

    /** Ends the JVM however it can, for clean-up. */
    void destroy() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }

    private int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " did not exit within " + timeout);
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

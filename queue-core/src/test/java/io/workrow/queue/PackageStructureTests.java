package io.workrow.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The engine's room plan, kept by the build: no two packages of queue-core depend on each other,
 * even through others, and the runtime's helper packages ({@code worker.cluster},
 * {@code worker.notify}, ...) never reach back up into the runtime. Read from the sources: every
 * import and every fully qualified name of a Workrow type counts as a dependency.
 */
class PackageStructureTests {

    private static final Path SOURCES = Path.of("src/main/java");
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern REFERENCE = Pattern.compile("\\b(io\\.workrow\\.queue(?:\\.[a-z]\\w*)*)\\.[A-Z]");
    private static final Pattern COMMENT = Pattern.compile("(?s)/\\*.*?\\*/|//[^\\n]*");

    @Test
    void noPackageDependsOnItselfThroughOthers() {
        Map<String, Set<String>> uses = dependencies();
        assertThat(uses).as("packages read").containsKeys("io.workrow.queue.worker", "io.workrow.queue.store");

        List<List<String>> cycles = new ArrayList<>();
        for (String start : uses.keySet()) {
            List<String> cycle = pathBack(start, start, uses, new TreeSet<>(), new ArrayList<>());
            if (cycle != null) {
                cycles.add(cycle);
            }
        }
        assertThat(cycles).as("package cycles (each listed from each of its packages)").isEmpty();
    }

    @Test
    void theRuntimesHelpersNeverReachBackIntoTheRuntime() {
        Map<String, Set<String>> uses = dependencies();
        List<String> helpers = uses.keySet().stream().filter(name -> name.startsWith("io.workrow.queue.worker.")).toList();
        assertThat(helpers).contains("io.workrow.queue.worker.cluster", "io.workrow.queue.worker.notify",
                "io.workrow.queue.worker.periodic", "io.workrow.queue.worker.thread",
                "io.workrow.queue.worker.connection");
        for (String helper : helpers) {
            assertThat(uses.get(helper)).as(helper).doesNotContain("io.workrow.queue.worker");
        }
    }

    /** A path from {@code from} back to {@code target}, or null: depth first over the graph. */
    private static List<String> pathBack(String target, String from, Map<String, Set<String>> uses, Set<String> seen,
            List<String> path) {
        path.add(from);
        for (String next : uses.getOrDefault(from, Set.of())) {
            if (next.equals(target)) {
                List<String> cycle = new ArrayList<>(path);
                cycle.add(target);
                return cycle;
            }
            if (seen.add(next)) {
                List<String> found = pathBack(target, next, uses, seen, path);
                if (found != null) {
                    return found;
                }
            }
        }
        path.remove(path.size() - 1);
        return null;
    }

    /** Each package of queue-core's main sources, and the other Workrow packages it uses. */
    private static Map<String, Set<String>> dependencies() {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            files.filter(file -> file.toString().endsWith(".java")).forEach(file -> {
                String text = read(file);
                Matcher declared = PACKAGE.matcher(text);
                if (!declared.find()) {
                    return;
                }
                String own = declared.group(1);
                Set<String> used = uses.computeIfAbsent(own, name -> new TreeSet<>());
                Matcher reference = REFERENCE.matcher(COMMENT.matcher(text).replaceAll(""));
                while (reference.find()) {
                    if (!reference.group(1).equals(own)) {
                        used.add(reference.group(1));
                    }
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return uses;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.workrow.queue.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * Runs the protocols' model checks (scripts/model-check.sh, spin): the batch protocol of the
 * write-once layout and the cluster-wide concurrency cap. Their properties hold, and every mutant
 * is caught.
 */
@DisabledOnOs(OS.WINDOWS)
class ProtocolModelTests {

    @Test
    void theProtocolModelsHoldAndTheirMutantsAreCaught() throws Exception {
        if (!onPath("spin") || !onPath("gcc")) {
            // Skipped only outside CI, whose script installs both.
            assertThat(System.getenv("CI")).as("spin and gcc are needed for the model check: apt-get install spin gcc")
                    .isNull();
            Assumptions.abort("spin or gcc is not installed");
        }
        Path output = Files.createTempFile("model-check", ".txt");
        Process check = new ProcessBuilder("bash", "scripts/model-check.sh").redirectErrorStream(true)
                .redirectOutput(output.toFile()).start();
        boolean ended = check.waitFor(15, TimeUnit.MINUTES);
        if (!ended) {
            // The script runs the checks in processes of its own: stop them too.
            check.descendants().forEach(ProcessHandle::destroyForcibly);
            check.destroyForcibly();
        }
        String printed = Files.readString(output);
        System.out.print(printed);
        assertThat(ended).as("model check ended").isTrue();
        assertThat(check.exitValue()).as(printed).isZero();
        assertThat(checksAsExpected(printed, "batch")).hasSize(9);
        assertThat(checksAsExpected(printed, "cap")).hasSize(4);
    }

    private static List<String> checksAsExpected(String printed, String model) {
        return printed.lines().filter(line -> line.startsWith(model + ": ") && line.contains("as expected")).toList();
    }

    private static boolean onPath(String command) {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(directory, command))) {
                return true;
            }
        }
        return false;
    }
}

package io.workrow.sample.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus alert rules in {@code ops/prometheus}: valid for promtool, and each alert's unit
 * test passes (fires on the series it is about, stays quiet on the ones it is not). Which metric
 * names they use is checked against the sample's scrape in {@code SampleApplicationTests}.
 */
class AlertRulesTests {

    private static final Path RULES = Path.of("..", "ops", "prometheus", "workrow-alerts.yml");
    private static final Path RULE_TESTS = Path.of("..", "ops", "prometheus", "workrow-alerts-test.yml");

    @BeforeAll
    static void promtoolIsInstalled() {
        if (!onPath("promtool")) {
            // Skipped only outside CI, whose script installs it.
            assertThat(System.getenv("CI")).as("promtool is needed for the alert rules: apt-get install prometheus")
                    .isNull();
            Assumptions.abort("promtool is not installed");
        }
    }

    @Test
    void theRulesAreValid() throws Exception {
        String printed = promtool("check", "rules", RULES.toString());
        assertThat(printed).contains("SUCCESS: 8 rules found");
    }

    @Test
    void everyAlertHasAUnitTestAndTheyPass() throws Exception {
        String printed = promtool("test", "rules", RULE_TESTS.toString());
        assertThat(printed).contains("SUCCESS");
        String rules = Files.readString(RULES);
        String tests = Files.readString(RULE_TESTS);
        List<String> alerts = rules.lines().map(String::strip).filter(line -> line.startsWith("- alert: "))
                .map(line -> line.substring("- alert: ".length())).toList();
        assertThat(alerts).hasSize(8);
        for (String alert : alerts) {
            assertThat(tests).as("a unit test of " + alert).contains("alertname: " + alert);
        }
    }

    private static String promtool(String... arguments) throws Exception {
        List<String> command = new ArrayList<>();
        command.add("promtool");
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String printed = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("promtool ended").isTrue();
        assertThat(process.exitValue()).as(printed).isZero();
        return printed;
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

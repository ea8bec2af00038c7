package io.workrow.sample.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What a release would publish, as the build left it in each module's {@code target}: every
 * published jar module has its sources and javadoc jars and a CycloneDX SBOM, and the bill of
 * materials, flattened, pins exactly the published modules and nothing of Spring Boot's. Which
 * modules are published is read from the poms: all but those that skip deploying.
 */
class PublishedArtifactsTests {

    private static final Path ROOT = Path.of("..");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern ARTIFACT_ID = Pattern.compile("<artifactId>([^<]+)</artifactId>");

    @Test
    void everyPublishedModuleHasItsSourcesJavadocAndSbomAndTheBomPinsExactlyThem() throws Exception {
        String rootPom = Files.readString(ROOT.resolve("pom.xml"));
        String version = tag(rootPom.substring(rootPom.indexOf("</artifactId>")), "version");
        List<String> published = new ArrayList<>();
        List<String> unpublished = new ArrayList<>();
        List<String> jars = new ArrayList<>();
        Matcher modules = MODULE.matcher(rootPom);
        while (modules.find()) {
            String module = modules.group(1);
            String pom = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
            if (pom.contains("<maven.deploy.skip>true</maven.deploy.skip>")) {
                unpublished.add(module);
                continue;
            }
            published.add(module);
            if (!pom.contains("<packaging>pom</packaging>")) {
                jars.add(module);
            }
        }
        assertThat(published).contains("queue-core", "queue-spring-boot-autoconfigure", "queue-spring-boot-starter",
                "queue-test", "queue-test-database", "queue-bom").doesNotContain("sample-app", "queue-faults");
        // The release's upload leaves out the same modules a deploy skips.
        assertThat(List.of(tag(rootPom, "excludeArtifacts").split(","))).containsExactlyInAnyOrderElementsOf(unpublished);
        // CI builds a fresh checkout, so the files below are this build's.
        Path bom = ROOT.resolve("queue-bom/target/.flattened-pom.xml");
        if (!Files.exists(bom)) {
            // Built by the whole reactor's verify (as in CI); a module built alone has not made them.
            assertThat(System.getenv("CI")).as("the whole build has run, so " + bom + " exists").isNull();
            Assumptions.abort("run the whole build (./mvnw verify) to check what it publishes");
        }
        for (String module : jars) {
            Path target = ROOT.resolve(module).resolve("target");
            for (String file : List.of(".jar", "-sources.jar", "-javadoc.jar", "-cyclonedx.json")) {
                Path made = target.resolve(module + "-" + version + file);
                assertThat(made).as(module + ": " + file + " (an offline build makes no SBOM)").exists();
                assertThat(Files.size(made)).as(made.toString()).isPositive();
            }
            assertThat(Files.readString(target.resolve(module + "-" + version + "-cyclonedx.json")))
                    .contains("\"bomFormat\" : \"CycloneDX\"")
                    .contains("pkg:maven/io.workrow/" + module + "@" + version);
        }

        String flattened = Files.readString(bom);
        assertThat(flattened).doesNotContain("<parent>").doesNotContain("spring-boot-dependencies");
        List<String> pinned = new ArrayList<>();
        String managed = flattened.substring(flattened.indexOf("<dependencyManagement>"),
                flattened.indexOf("</dependencyManagement>"));
        Matcher artifacts = ARTIFACT_ID.matcher(managed);
        while (artifacts.find()) {
            pinned.add(artifacts.group(1));
        }
        assertThat(pinned).containsExactlyInAnyOrderElementsOf(jars);
        // ${project.version} is the bom's own version wherever it is imported: it has no parent.
        assertThat(managed).doesNotContain("<groupId>org.").contains("<version>${project.version}</version>");
        assertThat(tag(flattened, "version")).isEqualTo(version);
    }

    private static String tag(String xml, String name) {
        int start = xml.indexOf("<" + name + ">") + name.length() + 2;
        return xml.substring(start, xml.indexOf("</" + name + ">", start));
    }
}

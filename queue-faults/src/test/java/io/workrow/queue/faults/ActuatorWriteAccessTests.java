package io.workrow.queue.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.client.JdbcQueueAdmin;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The {@code workrow} endpoint's write operations behind the security docs/operations.md shows:
 * refused without credentials and without the operator role, done with it; and absent altogether
 * while the endpoint keeps its default, read-only access.
 */
class ActuatorWriteAccessTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void clean() {
        database.jdbc().update("DELETE FROM workrow_queue_pause");
    }

    @Test
    void writeOperationsNeedTheOperatorRole() throws Exception {
        try (ConfigurableApplicationContext app = start("--management.endpoint.workrow.access=unrestricted")) {
            String pause = base(app) + "/actuator/workrow/ops/pause";
            assertThat(post(pause, null).statusCode()).as("no credentials").isEqualTo(401);
            assertThat(post(pause, "viewer").statusCode()).as("without QUEUE_OPERATOR").isEqualTo(403);
            assertThat(paused()).isEmpty();
            assertThat(get(base(app) + "/actuator/workrow", "viewer").statusCode()).as("reading is allowed").isEqualTo(200);
            assertThat(post(pause, "operator").statusCode()).isBetween(200, 204);
            assertThat(paused()).containsExactly("ops");
        }
    }

    @Test
    void withTheDefaultAccessThereAreNoWriteOperations() throws Exception {
        try (ConfigurableApplicationContext app = start()) {
            assertThat(post(base(app) + "/actuator/workrow/ops/pause", "operator").statusCode()).isGreaterThanOrEqualTo(400);
            assertThat(paused()).isEmpty();
            assertThat(get(base(app) + "/actuator/workrow", "viewer").statusCode()).isEqualTo(200);
        }
    }

    private static ConfigurableApplicationContext start(String... extra) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
                "--spring.datasource.url=" + database.jdbcUrl(), "--spring.datasource.username=" + database.server().user(),
                "--spring.datasource.password=" + (database.server().password() == null ? "" : database.server().password()),
                "--management.endpoints.web.exposure.include=workrow"));
        args.addAll(List.of(extra));
        return new SpringApplication(Operations.class).run(args.toArray(String[]::new));
    }

    private static String base(ConfigurableApplicationContext app) {
        return "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    private List<String> paused() {
        return new JdbcQueueAdmin(database.store()).pausedQueues();
    }

    private HttpResponse<String> post(String url, String user) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"reason\":\"test\"}")), user);
    }

    private HttpResponse<String> get(String url, String user) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(url)).GET(), user);
    }

    private HttpResponse<String> send(HttpRequest.Builder request, String user) throws Exception {
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8)));
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** An application with the actuator secured as docs/operations.md shows. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Operations {

        @Bean
        SecurityFilterChain actuator(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests
                            .requestMatchers(HttpMethod.POST, "/actuator/workrow/**").hasRole("QUEUE_OPERATOR")
                            .anyRequest().hasRole("OPS"))
                    .httpBasic(Customizer.withDefaults())
                    // The actuator takes JSON from operators' tools, not forms from browsers.
                    .csrf(csrf -> csrf.disable())
                    .build();
        }

        @Bean
        UserDetailsService users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("viewer").password("{noop}secret").roles("OPS").build(),
                    User.withUsername("operator").password("{noop}secret").roles("OPS", "QUEUE_OPERATOR").build());
        }
    }
}

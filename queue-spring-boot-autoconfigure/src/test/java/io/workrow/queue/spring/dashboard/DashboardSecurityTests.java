package io.workrow.queue.spring.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The dashboard in a whole application behind Spring Security, over HTTP: viewers may read, only
 * operators may write through the endpoint and only with the CSRF token the page carries; under
 * a context path and a custom dashboard path; payloads withheld by default.
 */
class DashboardSecurityTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static ConfigurableApplicationContext context;
    private static String root;

    record Hook(String url) {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class SecuredApplication {

        @Bean
        DataSource dataSource() {
            return new DelegatingDataSource(database.dataSource());
        }

        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            http.authorizeHttpRequests(requests -> requests
                    .requestMatchers("/error").permitAll()
                    .requestMatchers(HttpMethod.POST, "/actuator/workrow/**").hasRole("OPS")
                    .anyRequest().authenticated())
                    .httpBasic(Customizer.withDefaults());
            return http.build();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("viewer").password("{noop}viewer").roles("VIEWER").build(),
                    User.withUsername("ops").password("{noop}ops").roles("OPS").build());
        }
    }

    @BeforeAll
    static void start() {
        context = new SpringApplicationBuilder(SecuredApplication.class).properties(
                "server.port=0", "server.servlet.context-path=/shop", "workrow.enabled=false",
                "workrow.dashboard.enabled=true", "workrow.dashboard.path=/ops/queues",
                "management.endpoints.web.exposure.include=workrow", "management.endpoint.workrow.access=unrestricted")
                .run();
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        root = "http://localhost:" + port + "/shop";
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @BeforeEach
    void clean() {
        database.deleteAllJobs();
        database.jdbc().update("DELETE FROM workrow_queue_pause");
    }

    /** A client with its own cookie jar (its own session) signing in as {@code user}. */
    private static final class Session {

        private final HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
        private final String authorization;

        Session(String user) {
            this.authorization = "Basic " + Base64.getEncoder().encodeToString((user + ":" + user)
                    .getBytes(StandardCharsets.UTF_8));
        }

        HttpResponse<String> get(String path) throws Exception {
            return http.send(HttpRequest.newBuilder(URI.create(root + path)).header("Authorization", authorization)
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
        }

        HttpResponse<String> post(String path, String body, String csrfHeader, String csrfToken) throws Exception {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(root + path))
                    .header("Authorization", authorization).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (csrfToken != null) {
                request.header(csrfHeader, csrfToken);
            }
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    private static String meta(String page, String name) {
        Matcher matcher = Pattern.compile("<meta name=\"workrow-" + name + "\" content=\"([^\"]*)\">").matcher(page);
        assertThat(matcher.find()).as("meta workrow-" + name).isTrue();
        return matcher.group(1);
    }

    @Test
    void thePageNeedsASignedInUserAndCarriesTheCsrfTokenAndTheEndpointUnderTheContextPath() throws Exception {
        HttpResponse<String> anonymous = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(root + "/ops/queues")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(401);

        HttpResponse<String> page = new Session("viewer").get("/ops/queues");

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(
                policy -> assertThat(policy).contains("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"));
        assertThat(meta(page.body(), "base")).isEqualTo("/shop/ops/queues");
        assertThat(meta(page.body(), "endpoint")).isEqualTo("/shop/actuator/workrow");
        assertThat(meta(page.body(), "csrf-header")).isEqualTo("X-CSRF-TOKEN");
        assertThat(meta(page.body(), "csrf-token")).isNotEmpty();
        assertThat(page.body()).contains("src=\"/shop/ops/queues/dashboard.js\"")
                .doesNotContain("http://", "https://");
        assertThat(new Session("viewer").get("/ops/queues/dashboard.js").statusCode()).isEqualTo(200);
    }

    @Test
    void onlyAnOperatorWithThePagesCsrfTokenMayWrite() throws Exception {
        Session viewer = new Session("viewer");
        String viewerPage = viewer.get("/ops/queues").body();
        assertThat(viewer.post("/actuator/workrow/webhooks/pause", "{}", meta(viewerPage, "csrf-header"),
                meta(viewerPage, "csrf-token")).statusCode()).as("a viewer, token and all").isEqualTo(403);

        Session ops = new Session("ops");
        String opsPage = ops.get("/ops/queues").body();
        assertThat(ops.post("/actuator/workrow/webhooks/pause", "{}", null, null).statusCode())
                .as("an operator without the token").isEqualTo(403);
        assertThat(ops.post("/actuator/workrow/webhooks/pause", "{}", "X-CSRF-TOKEN", "forged").statusCode())
                .as("an operator with a forged token").isEqualTo(403);
        assertThat(database.jdbc().queryForObject("SELECT count(*) FROM workrow_queue_pause", Integer.class)).isZero();

        HttpResponse<String> paused = ops.post("/actuator/workrow/webhooks/pause", "{}", meta(opsPage, "csrf-header"),
                meta(opsPage, "csrf-token"));

        assertThat(paused.statusCode()).isEqualTo(200);
        assertThat(database.jdbc().queryForList("SELECT queue FROM workrow_queue_pause", String.class))
                .containsExactly("webhooks");
        assertThat(ops.get("/ops/queues/api/overview").body()).contains("\"queue\":\"webhooks\"", "\"paused\":true");
    }

    @Test
    void aJobsRowWithholdsPayloadHeadersAndStepUnlessThePageMayShowThem() throws Exception {
        long id = context.getBean(JobQueue.class).enqueue(JobRequest.of("webhooks", new Hook("https://secret.example/me")));
        database.rows().setStep(id, "{\"cursor\":\"secret-step\"}");
        Session viewer = new Session("viewer");

        HttpResponse<String> job = viewer.get("/ops/queues/api/jobs/" + id);

        assertThat(job.statusCode()).isEqualTo(200);
        assertThat(job.body()).contains("\"id\":" + id, "\"queue\":\"webhooks\"", "\"payloadShown\":false")
                .doesNotContain("secret");
        assertThat(viewer.get("/ops/queues/api/jobs/" + (id + 1000)).statusCode()).isEqualTo(404);
    }
}

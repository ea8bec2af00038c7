package io.workrow.sample.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.test.WorkrowTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The dashboard when the workrow endpoint keeps its default, read-only access: the page shows
 * why it offers no writes, has no write buttons, and the endpoint refuses a write sent anyway.
 */
@WorkrowTest(startWorkers = true)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "management.endpoint.workrow.access=read-only",
        "workrow.dashboard.show-payloads=false",
        "workrow.poll-interval=200ms",
        "workrow.queues.send-receipt.backoff.initial=50ms",
        "workrow.queues.send-receipt.backoff.max=100ms"})
class DashboardReadOnlyBrowserTests {

    @Autowired
    JdbcTemplate jdbc;

    @LocalServerPort
    int port;

    @Test
    void offersNoWritesAndTheEndpointRefusesOne() throws Exception {
        DashboardBrowserTests.placeOrder(port, "poison");
        DashboardBrowserTests.awaitDead(jdbc, 1);
        long dead = jdbc.queryForObject("SELECT id FROM workrow_job WHERE status = 'dead'", Long.class);

        try (DashboardBrowser browser = DashboardBrowser.open()) {
            browser.get("http://localhost:" + port + "/workrow#job=" + dead);

            assertThat(browser.find("#writes-status").getText()).isEqualTo("Read-only: the workrow endpoint's access is "
                    + "read-only; management.endpoint.workrow.access=unrestricted allows retry, cancel, pause and resume.");
            assertThat(browser.find("#dead tr[data-queue='send-receipt']").getText())
                    .contains(DashboardBrowserTests.DEAD_ERROR);
            assertThat(browser.find("#job dd[data-field='Payload']").getText())
                    .isEqualTo("withheld (workrow.dashboard.show-payloads is false)");
            assertThat(browser.findAll("button.retry-group, button[data-action]")).isEmpty();
            browser.screenshot("read-only");
        }

        HttpResponse<String> refused = HttpClient.newHttpClient().send(HttpRequest
                .newBuilder(URI.create("http://localhost:" + port + "/actuator/workrow/send-receipt/retry"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"ids\":[" + dead + "]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).as("the endpoint itself refuses the write").isIn(404, 405);
        assertThat(jdbc.queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, dead))
                .isEqualTo("dead");
    }
}

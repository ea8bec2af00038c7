package io.workrow.sample.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.test.WorkrowTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The sample shop's dashboard in a real headless Chromium, with writes allowed as the sample
 * configures them: its queues, a dead job's error and row, retrying a group of dead jobs and,
 * once they have died again, cancelling the group; pausing and resuming the queue.
 */
@WorkrowTest(startWorkers = true)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "workrow.poll-interval=200ms",
        "workrow.queues.send-receipt.backoff.initial=50ms",
        "workrow.queues.send-receipt.backoff.max=100ms",
        // Poison orders fail 16 sends in a row here, more than the shop's breaker lets pass.
        "workrow.queues.send-receipt.breaker.failure-threshold=50",
        // Redraws come when the test asks (the page's Refresh) or after a write, never between a
        // find and a click.
        "workrow.dashboard.refresh-interval=1h"})
class DashboardBrowserTests {

    static final String DEAD_ERROR = "java.lang.IllegalStateException";

    @Autowired
    JdbcTemplate jdbc;

    @LocalServerPort
    int port;

    static long placeOrder(int port, String customer) throws Exception {
        HttpResponse<String> created = HttpClient.newHttpClient().send(HttpRequest
                .newBuilder(URI.create("http://localhost:" + port + "/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"customer\":\"" + customer + "\",\"amountCents\":900}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).isEqualTo(201);
        return Long.parseLong(created.body().replaceAll("\\D", ""));
    }

    static void awaitDead(JdbcTemplate jdbc, int jobs) {
        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM workrow_job WHERE status = 'dead'", Integer.class) == jobs);
    }

    @Test
    void showsTheShopsQueuesAndADeadJobsErrorAndRetriesItsGroup() throws Exception {
        placeOrder(port, "ada");
        placeOrder(port, "poison");
        placeOrder(port, "poison");
        awaitDead(jdbc, 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM workrow_job WHERE status = 'completed'", Integer.class) == 1);
        List<Long> dead = jdbc.queryForList("SELECT id FROM workrow_job WHERE status = 'dead' ORDER BY id", Long.class);

        try (DashboardBrowser browser = DashboardBrowser.open()) {
            browser.get("http://localhost:" + port + "/workrow");

            WebElement queue = browser.find("#queues tr[data-queue='send-receipt']");
            assertThat(queue.getText()).startsWith("send-receipt").contains("Pause");
            assertThat(queue.findElement(By.cssSelector(".dead-count")).getText()).isEqualTo("2");
            WebElement group = browser.find("#dead tr[data-queue='send-receipt'][data-error='" + DEAD_ERROR + "']");
            assertThat(group.getText()).contains(DEAD_ERROR, "mail server rejected the receipt for order", "Retry all 2");
            assertThat(browser.findAll("#writes-status")).singleElement().satisfies(status -> assertThat(status.isDisplayed()).isFalse());
            browser.screenshot("overview");

            group.findElement(By.cssSelector("a.job[data-job='" + dead.get(1) + "']")).click();
            WebElement job = browser.find("#job");
            assertThat(browser.find("#job dd[data-field='Status']").getText()).isEqualTo("dead");
            assertThat(browser.find("#job dd[data-field='Last error']").getText())
                    .isEqualTo(DEAD_ERROR + ": mail server rejected the receipt for order "
                            + jdbc.queryForObject("SELECT payload->>'orderId' FROM workrow_job WHERE id = ?",
                                    String.class, dead.get(1)));
            assertThat(browser.find("#job dd[data-field='Payload']").getText()).contains("\"orderId\"");
            assertThat(job.getText()).contains("Retry");
            browser.screenshot("dead-job");

            java.sql.Timestamp diedAt = jdbc.queryForObject(
                    "SELECT max(finished_at) FROM workrow_job WHERE status = 'dead'", java.sql.Timestamp.class);
            browser.find("#dead .retry-group").click();

            String message = browser.until(d -> {
                WebElement shown = d.findElement(By.id("message"));
                return shown.isDisplayed() && !shown.getText().startsWith("Working") ? shown.getText() : null;
            });
            assertThat(message).isEqualTo("Retried 2 dead job(s) of send-receipt (" + DEAD_ERROR + ").");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE id IN (?, ?)"
                    + " AND (status <> 'dead' OR finished_at > ?)", Integer.class, dead.get(0), dead.get(1), diedAt))
                    .as("both back to work, or dead again since").isEqualTo(2);
            browser.screenshot("retried");

            awaitDead(jdbc, 2);
            browser.get("http://localhost:" + port + "/workrow");
            browser.redraw(); // a page loaded within 2 s of the last read shares it; Refresh reads anew
            WebElement firstCancel = browser.find("#dead button[data-action='cancel-group']");
            firstCancel.click();
            browser.redraw();
            assertThat(firstCancel).as("the table was drawn anew").satisfies(button ->
                    assertThat(org.assertj.core.api.Assertions.catchThrowable(button::getText))
                            .isInstanceOf(org.openqa.selenium.StaleElementReferenceException.class));
            assertThat(browser.find("#dead button[data-action='cancel-group']").getText())
                    .as("the question survives the redraw").isEqualTo("Really cancel 2?");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_job WHERE status = 'dead'", Integer.class))
                    .as("nothing yet: Cancel asks twice").isEqualTo(2);
            browser.find("#dead button[data-action='cancel-group']").click();

            String cancelled = browser.until(d -> {
                WebElement shown = d.findElement(By.id("message"));
                return shown.isDisplayed() && shown.getText().startsWith("Cancelled") ? shown.getText() : null;
            });
            assertThat(cancelled).isEqualTo("Cancelled 2 dead job(s) of send-receipt (" + DEAD_ERROR + ").");
            assertThat(jdbc.queryForList("SELECT status FROM workrow_job WHERE id IN (?, ?)", String.class,
                    dead.get(0), dead.get(1))).containsExactly("cancelled", "cancelled");
            assertThat(browser.find("#dead-empty").getText()).isEqualTo("No dead jobs.");
            browser.screenshot("cancelled");

            browser.find("#queues tr[data-queue='send-receipt'] button[data-action='pause']").click();
            assertThat(browser.find("#queues tr[data-queue='send-receipt'] .badge.paused").getText()).isEqualTo("paused");
            assertThat(jdbc.queryForList("SELECT queue FROM workrow_queue_pause", String.class))
                    .containsExactly("send-receipt");
            browser.screenshot("paused");
            browser.find("#queues tr[data-queue='send-receipt'] button[data-action='resume']").click();
            browser.find("#queues tr[data-queue='send-receipt'] button[data-action='pause']");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_queue_pause", Integer.class)).isZero();
        }
    }

    /**
     * The shop has no Spring Security, and its endpoint takes writes. A page on another site can
     * still not write: what a form or a script may send it without asking first (no content type,
     * text, a form's encodings) is refused, and a JSON request's preflight gets no permission.
     */
    @Test
    void anotherSiteCannotWriteThroughTheEndpointWithoutSpringSecurity() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        URI pause = URI.create("http://localhost:" + port + "/actuator/workrow/send-receipt/pause");
        for (String type : List.of("", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x")) {
            HttpRequest.Builder request = HttpRequest.newBuilder(pause).header("Origin", "http://elsewhere.example")
                    .POST(HttpRequest.BodyPublishers.ofString(type.isEmpty() ? "" : "reason=x"));
            if (!type.isEmpty()) {
                request.header("Content-Type", type);
            }
            assertThat(http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode())
                    .as("a write as '%s'", type).isEqualTo(415);
        }
        HttpResponse<Void> preflight = http.send(HttpRequest.newBuilder(pause).header("Origin", "http://elsewhere.example")
                .header("Access-Control-Request-Method", "POST").header("Access-Control-Request-Headers", "content-type")
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM workrow_queue_pause", Integer.class)).isZero();
    }
}

package io.workrow.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.JobQueue;
import io.workrow.queue.JobRequest;
import io.workrow.queue.RecurringJob;
import io.workrow.queue.test.WorkrowTest;
import io.workrow.sample.report.SalesReport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@WorkrowTest(startWorkers = true)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "workrow.poll-interval=200ms",
        "workrow.queues.send-receipt.backoff.initial=100ms",
        "workrow.queues.send-receipt.backoff.max=500ms",
        "workrow.metrics.refresh-interval=200ms"})
class SampleApplicationTests {

    @Autowired
    JdbcTemplate jdbc;

    @LocalServerPort
    int port;

    @Autowired
    JobQueue queue;

    private final HttpClient http = HttpClient.newHttpClient();
    private final JsonMapper json = JsonMapper.builder().build();

    private HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode get(String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return json.readTree(response.body());
    }

    private long placeOrder(String customer) throws Exception {
        HttpResponse<String> created = post("/orders", "{\"customer\":\"" + customer + "\",\"amountCents\":1200}");
        assertThat(created.statusCode()).isEqualTo(201);
        return json.readTree(created.body()).get("id").asLong();
    }

    @Test
    void orderGetsItsReceiptSent() throws Exception {
        long id = placeOrder("ada");
        await().atMost(Duration.ofSeconds(10)).until(() -> get("/orders/" + id).get("receiptSent").asBoolean());
        JsonNode order = get("/orders/" + id);
        assertThat(order.get("customer").asString()).isEqualTo("ada");
        assertThat(order.get("amountCents").asLong()).isEqualTo(1200);
        assertThat(jdbc.queryForObject("SELECT partition_key || ' ' || idempotency_key FROM workrow_job"
                + " WHERE payload->>'orderId' = ?", String.class, Long.toString(id)))
                .isEqualTo("order:" + id + " receipt-" + id);
    }

    @Test
    void poisonOrderEndsDeadAfterItsAttempts() throws Exception {
        long id = placeOrder("poison");
        await().atMost(Duration.ofSeconds(20)).until(() -> "dead".equals(jdbc.queryForObject(
                "SELECT status FROM workrow_job WHERE payload->>'orderId' = ?", String.class, Long.toString(id))));
        assertThat(jdbc.queryForObject("SELECT attempts FROM workrow_job WHERE payload->>'orderId' = ?",
                Integer.class, Long.toString(id))).isEqualTo(4);
        assertThat(get("/orders/" + id).get("receiptSent").asBoolean()).isFalse();
    }

    private String text(String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    @Test
    void prometheusShowsEveryWorkrowMeterAfterAFewOrders() throws Exception {
        long id = placeOrder("grace");
        placeOrder("alan");
        await().atMost(Duration.ofSeconds(10)).until(() -> get("/orders/" + id).get("receiptSent").asBoolean());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(text("/actuator/prometheus"))
                .contains("workrow_jobs_claimed_total{queue=\"send-receipt\"")
                .contains("workrow_jobs_processed_total{queue=\"send-receipt\"")
                .contains("workrow_jobs_failed_total{queue=\"send-receipt\"")
                .contains("workrow_jobs_stale_total{queue=\"send-receipt\"")
                .contains("workrow_jobs_retired_total{queue=\"send-receipt\"")
                .contains("workrow_jobs_duration_seconds_count{outcome=\"success\",queue=\"send-receipt\"")
                .contains("workrow_queue_depth_jobs{queue=\"send-receipt\",status=\"pending\"")
                .contains("workrow_queue_lag_seconds{queue=\"send-receipt\"}")
                .as("the receipts' concurrency, 4 in application.yml")
                .contains("workrow_queue_handlers{queue=\"send-receipt\"} 4"));
    }

    @Test
    void theGrafanaBoardAndTheAlertRulesUseOnlyMetricsThisScrapeHasEachWithHelpText() throws Exception {
        long id = placeOrder("barbara");
        await().atMost(Duration.ofSeconds(10)).until(() -> get("/orders/" + id).get("receiptSent").asBoolean());
        String scrape = text("/actuator/prometheus");
        Path file = Files.createTempFile("scrape", ".txt");
        Files.writeString(file, scrape);
        Process check = new ProcessBuilder("bash", "../ops/check-metric-names.sh", file.toString())
                .redirectErrorStream(true).start();
        String printed = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(check.waitFor()).as(printed).isZero();
        assertThat(printed).containsPattern("(\\d+) metric names used, \\1 in the scrape");

        List<String> families = scrape.lines().filter(line -> line.startsWith("# TYPE workrow_"))
                .map(line -> line.split(" ")[2]).toList();
        assertThat(families).contains("workrow_job_seconds", "workrow_breaker_transitions_total");
        for (String family : families) {
            String base = family.replaceFirst("_total$", "");
            assertThat(scrape.lines().filter(line -> line.startsWith("# HELP " + base + " ")
                    || line.startsWith("# HELP " + family + " ")).map(line -> line.substring(line.indexOf(' ', 7) + 1)))
                    .as("help text of " + family).singleElement().asString().isNotBlank();
        }
    }

    @Test
    void theDailySalesReportIsDeclaredAndATicksJobReportsTheDayBeforeItsTick() throws Exception {
        await().atMost(Duration.ofSeconds(10)).until(() -> get("/actuator/workrow").get("recurring").size() == 1);
        JsonNode recurring = get("/actuator/workrow").get("recurring").get(0);
        assertThat(recurring.get("name").asString()).isEqualTo("daily-sales-report");
        assertThat(recurring.get("queue").asString()).isEqualTo("sales-report");
        assertThat(Instant.parse(recurring.get("nextTick").asString()).atZone(ZoneId.of("Europe/Berlin")).getHour())
                .isEqualTo(6);

        placeOrder("barbara");
        // The job a tick a second from now makes, as the recurring scheduler enqueues it.
        Instant tick = Instant.now().plusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
        SalesReport report = new SalesReport(1);
        queue.enqueue(JobRequest.of("sales-report", report).runAt(tick).idempotencyKey(
                RecurringJob.of("daily-sales-report", "0 0 6 * * *", "sales-report", report).idempotencyKey(tick)));
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM sales_report WHERE tick = ?", Long.class, Timestamp.from(tick)) == 1);
        assertThat(jdbc.queryForObject("SELECT orders FROM sales_report WHERE tick = ?", Long.class,
                Timestamp.from(tick))).as("barbara's order, placed the second before").isPositive();
    }

    @Test
    void workrowEndpointAndHealthShowTheQueue() throws Exception {
        placeOrder("edsger");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(text("/actuator/workrow"))
                .contains("\"queue\":\"send-receipt\""));
        JsonNode health = get("/actuator/health");
        assertThat(health.get("components").get("workrow").get("status").asString()).isEqualTo("UP");
        assertThat(health.get("components").get("workrow").get("details").get("wakeUps").asString())
                .isEqualTo("listening");

        HttpResponse<String> paused = post("/actuator/workrow/send-receipt/pause", "{\"reason\":\"test\"}");
        assertThat(paused.statusCode()).isEqualTo(200);
        assertThat(text("/actuator/workrow")).contains("\"paused\":[\"send-receipt\"]");
        assertThat(post("/actuator/workrow/send-receipt/resume", "{}").statusCode()).isEqualTo(200);
        assertThat(text("/actuator/workrow")).contains("\"paused\":[]");

        HttpResponse<String> held = post("/actuator/workrow/send-receipt/hold",
                "{\"duration\":\"10m\",\"reason\":\"partner window\"}");
        assertThat(held.statusCode()).isEqualTo(200);
        JsonNode hold = get("/actuator/workrow").get("holds").get(0);
        assertThat(hold.get("queue").asString()).isEqualTo("send-receipt");
        assertThat(hold.get("reason").asString()).isEqualTo("held by hand: partner window");
        assertThat(Instant.parse(hold.get("until").asString())).isAfter(Instant.now().plus(Duration.ofMinutes(9)));
        assertThat(post("/actuator/workrow/send-receipt/hold", "{}").statusCode()).as("no duration").isEqualTo(400);
        assertThat(post("/actuator/workrow/send-receipt/release-hold", "{}").statusCode()).isEqualTo(200);
        assertThat(get("/actuator/workrow").get("holds").size()).isZero();
    }
}

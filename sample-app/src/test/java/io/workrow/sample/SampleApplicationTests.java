package io.workrow.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@ExtendWith(WorkrowTestDatabase.AroundSpring.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "workrow.poll-interval=200ms",
        "workrow.queues.send-receipt.backoff.initial=100ms",
        "workrow.queues.send-receipt.backoff.max=500ms"})
@DirtiesContext
class SampleApplicationTests {

    static final WorkrowTestDatabase database = WorkrowTestDatabase.empty();

    @DynamicPropertySource
    static void datasource(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", database::jdbcUrl);
        registry.add("spring.datasource.username", () -> database.server().user());
        registry.add("spring.datasource.password", () -> database.server().password());
    }

    @LocalServerPort
    int port;

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
        assertThat(database.jdbc().queryForObject("SELECT partition_key || ' ' || idempotency_key FROM workrow_job"
                + " WHERE payload->>'orderId' = ?", String.class, Long.toString(id)))
                .isEqualTo("order:" + id + " receipt-" + id);
    }

    @Test
    void poisonOrderEndsDeadAfterItsAttempts() throws Exception {
        long id = placeOrder("poison");
        await().atMost(Duration.ofSeconds(20)).until(() -> "dead".equals(database.jdbc().queryForObject(
                "SELECT status FROM workrow_job WHERE payload->>'orderId' = ?", String.class, Long.toString(id))));
        assertThat(database.jdbc().queryForObject("SELECT attempts FROM workrow_job WHERE payload->>'orderId' = ?",
                Integer.class, Long.toString(id))).isEqualTo(4);
        assertThat(get("/orders/" + id).get("receiptSent").asBoolean()).isFalse();
    }

    @Test
    void prometheusEndpointAnswers() throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/actuator/prometheus")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("jvm_");
    }
}

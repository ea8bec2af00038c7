package io.workrow.sample.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.test.WorkrowTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The dashboard when the workrow endpoint keeps its default, read-only access: the page shows
 * why it offers no writes, has no write buttons, and the endpoint refuses a retry the page sends
 * anyway.
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

            // The retry the page would send, sent from the page anyway (same origin, same session).
            Object status = browser.runAsync("""
                    const done = arguments[arguments.length - 1];
                    fetch('/actuator/workrow/send-receipt/retry', { method: 'POST',
                        headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ids: [arguments[0]] }) })
                      .then(response => done(response.status), error => done('failed: ' + error));
                    """, dead);
            assertThat(status).as("the endpoint refuses the write").isIn(404L, 405L);
        }

        assertThat(jdbc.queryForObject("SELECT status FROM workrow_job WHERE id = ?", String.class, dead))
                .isEqualTo("dead");
    }

    @Test
    void aPartThatCannotBeReadIsNamedWhileTheRestOfThePageIsShown() throws Exception {
        DashboardBrowserTests.placeOrder(port, "poison");
        DashboardBrowserTests.awaitDead(jdbc, 1);
        try (DashboardBrowser browser = DashboardBrowser.open()) {
            browser.get("http://localhost:" + port + "/workrow");
            assertThat(browser.findAll("#unavailable")).singleElement()
                    .satisfies(banner -> assertThat(banner.isDisplayed()).isFalse());

            // The recurring jobs' table gone for a moment, as a lock or a revoked grant would make it.
            jdbc.execute("ALTER TABLE workrow_recurring RENAME TO workrow_recurring_away");
            try {
                browser.redraw();
                assertThat(browser.find("#unavailable").getText())
                        .startsWith("Could not read recurring jobs: BadSqlGrammarException.");
                assertThat(browser.find("#queues tr[data-queue='send-receipt']").getText()).contains("send-receipt");
                assertThat(browser.find("#dead tr[data-queue='send-receipt']").getText())
                        .contains(DashboardBrowserTests.DEAD_ERROR);
                browser.screenshot("part-unavailable");
            } finally {
                jdbc.execute("ALTER TABLE workrow_recurring_away RENAME TO workrow_recurring");
            }
            browser.redraw();
            assertThat(browser.findAll("#unavailable")).singleElement()
                    .satisfies(banner -> assertThat(banner.isDisplayed()).isFalse());
        }
    }
}

package io.workrow.queue.spring.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.http.MappingMatch;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletMapping;
import org.springframework.mock.web.MockHttpServletRequest;

/** Where the page says it and the endpoint are: under the context and servlet paths, never the typed URI. */
class DashboardPageTests {

    private final DashboardPage page = new DashboardPage("/ops/queues");

    private static MockHttpServletRequest request(String uri, String contextPath, String servletPath,
            MockHttpServletMapping mapping) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", uri);
        request.setContextPath(contextPath);
        request.setServletPath(servletPath);
        request.setHttpServletMapping(mapping);
        return request;
    }

    @Test
    void underAServletMappedToAPathBothCarryTheServletPath() {
        String html = page.render(request("/shop/app/ops/queues", "/shop", "/app",
                new MockHttpServletMapping("ops/queues", "/app/*", "dispatcherServlet", MappingMatch.PATH)),
                DashboardWrites.through("/actuator/workrow"));

        assertThat(html).contains("<meta name=\"workrow-base\" content=\"/shop/app/ops/queues\">",
                "<meta name=\"workrow-endpoint\" content=\"/shop/app/actuator/workrow\">",
                "src=\"/shop/app/ops/queues/dashboard.js\"");
    }

    @Test
    void underTheDefaultServletOnlyTheContextPathWhateverTheClientTyped() {
        String html = page.render(request("/shop/ops/queues;jsessionid=x%22%3E", "/shop", "/ops/queues",
                new MockHttpServletMapping("", "/", "dispatcherServlet", MappingMatch.DEFAULT)),
                DashboardWrites.readOnly("no"));

        assertThat(html).contains("<meta name=\"workrow-base\" content=\"/shop/ops/queues\">",
                "<meta name=\"workrow-endpoint\" content=\"\">", "<meta name=\"workrow-csrf-token\" content=\"\">")
                .doesNotContain("jsessionid");
    }
}

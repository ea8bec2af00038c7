package io.workrow.queue.spring.dashboard;

import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.MappingMatch;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;
import org.springframework.web.util.HtmlUtils;

/**
 * The page's HTML with what the script needs in its meta tags: where the page and the endpoint
 * are, as this request reached them, and the CSRF token when Spring Security issues one.
 */
final class DashboardPage {

    private static final boolean SECURITY_PRESENT = ClassUtils
            .isPresent("org.springframework.security.web.csrf.CsrfToken", DashboardPage.class.getClassLoader());

    private final String path;
    private final String template;
    private final Map<String, byte[]> assets = new ConcurrentHashMap<>();

    /** @param path the page's path under the servlet, {@code workrow.dashboard.path} */
    DashboardPage(String path) {
        this.path = path;
        this.template = new String(read("dashboard.html"), StandardCharsets.UTF_8);
    }

    String render(HttpServletRequest request, DashboardWrites writes) {
        // The page and the endpoint sit under the context path and, when the dispatcher servlet is
        // mapped to a path such as /app/*, under that too; never under what the client typed.
        HttpServletMapping mapping = request.getHttpServletMapping();
        String prefix = request.getContextPath()
                + (mapping != null && mapping.getMappingMatch() == MappingMatch.PATH ? request.getServletPath() : "");
        String[] csrf = SECURITY_PRESENT ? SecurityCsrf.headerAndToken(request) : null;
        return template.replace("{{base}}", escape(prefix + path))
                .replace("{{endpoint}}", writes.allowed() ? escape(prefix + writes.endpointPath()) : "")
                .replace("{{csrfHeader}}", csrf == null ? "" : escape(csrf[0]))
                .replace("{{csrfToken}}", csrf == null ? "" : escape(csrf[1]));
    }

    byte[] asset(String name) {
        return assets.computeIfAbsent(name, DashboardPage::read);
    }

    private static String escape(String value) {
        return HtmlUtils.htmlEscape(value, StandardCharsets.UTF_8.name());
    }

    private static byte[] read(String name) {
        try (InputStream in = DashboardPage.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("The dashboard's " + name + " is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Touches Spring Security's types only when they are on the classpath. */
    private static final class SecurityCsrf {

        static String @Nullable [] headerAndToken(HttpServletRequest request) {
            Object token = request.getAttribute(org.springframework.security.web.csrf.CsrfToken.class.getName());
            if (token instanceof org.springframework.security.web.csrf.CsrfToken csrf) {
                return new String[] {csrf.getHeaderName(), csrf.getToken()};
            }
            return null;
        }
    }
}

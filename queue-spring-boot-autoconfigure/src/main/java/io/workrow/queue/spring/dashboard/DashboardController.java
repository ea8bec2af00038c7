package io.workrow.queue.spring.dashboard;

import io.workrow.queue.QueueAdmin;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;

/**
 * Serves the dashboard under {@code workrow.dashboard.path}: the page, its script and style, and
 * the two reads the page makes ({@code api/overview?fresh=true} reads anew rather than sharing the
 * last read, as the page does after its own writes). It has no write of its own; the page writes to the
 * {@code workrow} actuator endpoint.
 */
@Controller
@RequestMapping("${workrow.dashboard.path:/workrow}")
public class DashboardController {

    /** The page's own headers: nothing from elsewhere, no framing, no caching of queue data. */
    private static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final DashboardReads reads;
    private final DashboardPage page;
    private final Supplier<DashboardWrites> writes;

    private DashboardController(DashboardReads reads, DashboardPage page, Supplier<DashboardWrites> writes) {
        this.reads = reads;
        this.page = page;
        this.writes = writes;
    }

    /**
     * The dashboard at {@code path} (which must be the value the request mapping resolves,
     * {@code workrow.dashboard.path}), asking {@code writes} on every page load and read whether
     * it offers writes.
     */
    public static DashboardController create(QueueAdmin admin, String path, boolean showPayloads,
            Duration refreshInterval, Supplier<DashboardWrites> writes) {
        return new DashboardController(new DashboardReads(admin, Clock.systemUTC(), showPayloads, refreshInterval),
                new DashboardPage(path), writes);
    }

    @GetMapping(path = {"", "/"}, produces = MediaType.TEXT_HTML_VALUE)
    public ResponseEntity<String> page(HttpServletRequest request) {
        return ResponseEntity.ok().cacheControl(CacheControl.noStore())
                .header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
                .header("X-Content-Type-Options", "nosniff")
                .header("Referrer-Policy", "no-referrer")
                .contentType(new MediaType(MediaType.TEXT_HTML, java.nio.charset.StandardCharsets.UTF_8))
                .body(page.render(request, writes.get()));
    }

    @GetMapping("/dashboard.js")
    public ResponseEntity<byte[]> script() {
        return asset("dashboard.js", "text/javascript");
    }

    @GetMapping("/dashboard.css")
    public ResponseEntity<byte[]> style() {
        return asset("dashboard.css", "text/css");
    }

    @GetMapping(path = "/api/overview", produces = MediaType.APPLICATION_JSON_VALUE)
    @ResponseBody
    public ResponseEntity<DashboardOverview> overview(@RequestParam(defaultValue = "false") boolean fresh) {
        return ResponseEntity.ok().cacheControl(CacheControl.noStore()).body(reads.overview(writes.get(), fresh));
    }

    @GetMapping(path = "/api/jobs/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    @ResponseBody
    public ResponseEntity<Map<String, @Nullable Object>> job(@PathVariable long id) {
        return reads.job(id).map(job -> ResponseEntity.ok().cacheControl(CacheControl.noStore()).body(job))
                .orElseGet(() -> ResponseEntity.notFound().build());
    }

    private ResponseEntity<byte[]> asset(String name, String type) {
        return ResponseEntity.ok().cacheControl(CacheControl.noCache()).header("X-Content-Type-Options", "nosniff")
                .contentType(MediaType.parseMediaType(type + ";charset=UTF-8")).body(page.asset(name));
    }
}

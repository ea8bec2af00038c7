package io.workrow.sample.dashboard;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless Chromium driven through its ChromeDriver, with the flags this offline machine
 * needs, saving a screenshot of each state under {@code target/dashboard-screenshots}. Without
 * Chromium the tests are skipped, except under CI, which installs it and so must run them.
 */
final class DashboardBrowser implements AutoCloseable {

    static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

    private static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("CHROMIUM_BINARY", "/usr/bin/chromium"));
    private static final Path CHROMEDRIVER = Path.of(
            System.getenv().getOrDefault("CHROMEDRIVER_BINARY", "/usr/bin/chromedriver"));

    private final ChromeDriver driver;
    private final Path profile;

    private DashboardBrowser(ChromeDriver driver, Path profile) {
        this.driver = driver;
        this.profile = profile;
    }

    static DashboardBrowser open() throws IOException {
        boolean present = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("The browser tests need " + CHROMIUM + " and " + CHROMEDRIVER
                    + " (Debian's chromium and chromium-driver); .ci/run installs them");
        }
        assumeTrue(present, "No Chromium at " + CHROMIUM + " with " + CHROMEDRIVER + ": browser tests skipped");
        Path profile = Files.createTempDirectory("workrow-chromium");
        ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM.toFile()).addArguments("--headless",
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build();
        return new DashboardBrowser(new ChromeDriver(service, options), profile);
    }

    void get(String url) {
        driver.get(url);
        until(d -> "true".equals(d.findElement(By.tagName("body")).getDomAttribute("data-loaded")));
    }

    /** Runs {@code script} in the page, which ends by calling its last argument with the result. */
    Object runAsync(String script, Object... arguments) {
        return driver.executeAsyncScript(script, arguments);
    }

    /** Has the page read the queues again and redrawn every table, as its timer would. */
    void redraw() {
        String before = driver.findElement(By.tagName("body")).getDomAttribute("data-rendered");
        driver.findElement(By.id("refresh-now")).click();
        until(d -> {
            String now = d.findElement(By.tagName("body")).getDomAttribute("data-rendered");
            return now != null && !now.equals(before);
        });
    }

    WebElement find(String css) {
        return until(d -> d.findElements(By.cssSelector(css)).stream().filter(WebElement::isDisplayed).findFirst()
                .orElse(null));
    }

    List<WebElement> findAll(String css) {
        return driver.findElements(By.cssSelector(css));
    }

    <T> T until(Function<WebDriver, T> condition) {
        return new WebDriverWait(driver, Duration.ofSeconds(15)).until(condition::apply);
    }

    /** Saves the page as it is now, as {@code <name>.png}. */
    Path screenshot(String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Path file = SCREENSHOTS.resolve(name + ".png");
            Files.write(file, driver.getScreenshotAs(OutputType.BYTES));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        driver.quit();
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}

package io.workrow.queue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Restarts the PostgreSQL server the suite runs against, when it is a Debian cluster on this
 * machine ({@code pg_lsclusters}, {@code pg_ctlcluster}) that this user (its owner, or root) may
 * restart. Elsewhere (a remote server, a container) the scenario that needs it reports why it
 * cannot run. The restart cuts every session of the cluster, in every database: nothing else
 * should be running on it, as in CI, where modules and test classes run one after another.
 */
final class PostgresControl {

    private final String version;
    private final String cluster;

    private PostgresControl(String version, String cluster) {
        this.version = version;
        this.cluster = cluster;
    }

    /** The local cluster serving {@code jdbcUrl}'s port, if there is one to restart. */
    static Optional<PostgresControl> forServer(String jdbcUrl) {
        URI server = URI.create(jdbcUrl.substring("jdbc:".length()));
        String host = server.getHost();
        if (!"localhost".equals(host) && !"127.0.0.1".equals(host)) {
            return Optional.empty();
        }
        int port = server.getPort() < 0 ? 5432 : server.getPort();
        try {
            Process list = new ProcessBuilder("pg_lsclusters", "--no-header").redirectErrorStream(true).start();
            String clusters = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!list.waitFor(10, TimeUnit.SECONDS) || list.exitValue() != 0) {
                return Optional.empty();
            }
            // Ver Cluster Port Status Owner Data-directory Log-file; pg_ctlcluster needs its owner or root.
            String user = System.getProperty("user.name");
            return clusters.lines().map(line -> line.trim().split("\\s+"))
                    .filter(fields -> fields.length >= 5 && fields[2].equals(Integer.toString(port))
                            && fields[3].equals("online") && (fields[4].equals(user) || user.equals("root")))
                    .findFirst().map(fields -> new PostgresControl(fields[0], fields[1]));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** A fast restart: every session is cut, the server is back when this returns. Returns its milliseconds. */
    long restart() {
        long started = System.nanoTime();
        try {
            Process restart = new ProcessBuilder("pg_ctlcluster", "--skip-systemctl-redirect", version, cluster,
                    "restart", "-m", "fast").redirectErrorStream(true).start();
            String output = new String(restart.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!restart.waitFor(60, TimeUnit.SECONDS) || restart.exitValue() != 0) {
                throw new IllegalStateException("pg_ctlcluster restart failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return (System.nanoTime() - started) / 1_000_000;
    }

    @Override
    public String toString() {
        return "PostgreSQL " + version + "/" + cluster;
    }
}

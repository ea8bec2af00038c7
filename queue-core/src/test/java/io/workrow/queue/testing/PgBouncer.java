package io.workrow.queue.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real PgBouncer in transaction pooling mode in front of the test PostgreSQL, started as a child
 * process with a configuration of its own on a free loopback port, for tests of the deployments
 * that put one between the application and the database. {@link #available()} says whether the
 * binary is installed ({@code .ci/run} installs Debian's package).
 */
public final class PgBouncer implements AutoCloseable {

    private static final Path BINARY = Path.of("/usr/sbin/pgbouncer");

    private final Process process;
    private final int port;
    private final Path directory;

    private PgBouncer(Process process, int port, Path directory) {
        this.process = process;
        this.port = port;
        this.directory = directory;
    }

    public static boolean available() {
        return Files.isExecutable(BINARY);
    }

    /** Starts PgBouncer in transaction pooling mode in front of the server of {@code jdbcUrl}. */
    public static PgBouncer transactionPooling(String jdbcUrl, String user) throws IOException, InterruptedException {
        URI server = URI.create(jdbcUrl.substring("jdbc:".length()));
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path directory = Files.createTempDirectory("workrow-pgbouncer");
        // Writable for the user PgBouncer switches to when the tests run as root.
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path users = directory.resolve("users.txt");
        Files.writeString(users, "\"" + user + "\" \"\"\n");
        Path config = directory.resolve("pgbouncer.ini");
        Files.writeString(config, String.join("\n",
                "[databases]",
                "* = host=" + server.getHost() + " port=" + (server.getPort() < 0 ? 5432 : server.getPort()),
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                "listen_port = " + port,
                "unix_socket_dir =",
                "auth_type = trust",
                "auth_file = " + users,
                "pool_mode = transaction",
                "max_client_conn = 200",
                "default_pool_size = 20",
                "ignore_startup_parameters = extra_float_digits,options",
                "logfile = " + directory.resolve("pgbouncer.log"),
                "pidfile = " + directory.resolve("pgbouncer.pid"),
                ""));
        for (Path file : List.of(users, config)) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        }
        List<String> command = new ArrayList<>(List.of(BINARY.toString()));
        if ("root".equals(System.getProperty("user.name"))) {
            // PgBouncer refuses to run as root.
            command.addAll(List.of("-u", "postgres"));
        }
        command.add(config.toString());
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(directory.resolve("stdout.log").toFile()).start();
        PgBouncer bouncer = new PgBouncer(process, port, directory);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (Socket probe = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return bouncer;
            } catch (IOException notYet) {
                if (!process.isAlive()) {
                    break;
                }
                Thread.sleep(50);
            }
        }
        String log = Files.exists(directory.resolve("pgbouncer.log"))
                ? Files.readString(directory.resolve("pgbouncer.log")) : Files.readString(directory.resolve("stdout.log"));
        bouncer.close();
        throw new IllegalStateException("PgBouncer did not start:\n" + log);
    }

    /** {@code jdbcUrl} pointed at this PgBouncer instead of the server. */
    public String route(String jdbcUrl) {
        return jdbcUrl.replaceFirst("^jdbc:postgresql://[^/]*/", "jdbc:postgresql://127.0.0.1:" + port + "/");
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Where its configuration and log are. */
    public Path directory() {
        return directory;
    }
}

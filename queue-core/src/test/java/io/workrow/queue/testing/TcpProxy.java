package io.workrow.queue.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on the loopback interface in front of the test PostgreSQL, for network faults a
 * real deployment meets: {@link #refuseNewConnections(boolean)} (the server unreachable),
 * {@link #cutAll()} (connections reset), and {@link #freezeAll()} (the path silently drops every
 * packet of the open connections while the sockets stay open, as a dead NAT entry or a pulled
 * cable does).
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private volatile boolean refusing;

    private TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy in front of the server of {@code jdbcUrl}. */
    public static TcpProxy inFrontOf(String jdbcUrl) throws IOException {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        return new TcpProxy(new InetSocketAddress(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort()));
    }

    /** {@code jdbcUrl} pointed at this proxy instead of the server. */
    public String route(String jdbcUrl) {
        return jdbcUrl.replaceFirst("^jdbc:postgresql://[^/]*/", "jdbc:postgresql://127.0.0.1:" + server.getLocalPort() + "/");
    }

    public void refuseNewConnections(boolean refuse) {
        this.refusing = refuse;
    }

    /** Closes every open connection, as a reset would. */
    public void cutAll() {
        links.forEach(Link::close);
        links.clear();
    }

    /** Stops forwarding on every open connection without closing it; new connections work. */
    public void freezeAll() {
        links.forEach(link -> link.frozen = true);
        links.clear();
    }

    @Override
    public void close() throws IOException {
        server.close();
        cutAll();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                if (refusing) {
                    client.close();
                    continue;
                }
                Socket upstream = new Socket(target.getAddress(), target.getPort());
                Link link = new Link(client, upstream);
                links.add(link);
                link.pump(client, upstream);
                link.pump(upstream, client);
            } catch (IOException e) {
                // closed, or the target refused: the client sees its connection fail
            }
        }
    }

    private static final class Link {

        final Socket client;
        final Socket upstream;
        volatile boolean frozen;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void pump(Socket from, Socket to) {
            Thread thread = new Thread(() -> {
                byte[] buffer = new byte[8192];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int read;
                    while ((read = in.read(buffer)) >= 0) {
                        if (!frozen) {
                            out.write(buffer, 0, read);
                            out.flush();
                        }
                    }
                } catch (IOException e) {
                    // one side closed
                } finally {
                    if (!frozen) {
                        close();
                    }
                }
            }, "tcp-proxy-pump");
            thread.setDaemon(true);
            thread.start();
        }

        void close() {
            try {
                client.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            try {
                upstream.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}

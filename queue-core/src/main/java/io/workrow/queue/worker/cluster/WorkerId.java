package io.workrow.queue.worker.cluster;

import java.net.InetAddress;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Names this process incarnation in {@code claimed_by}: host, pid and a random suffix, so a
 * restarted process with the same host and pid never takes an old claim for its own.
 */
public final class WorkerId {

    private WorkerId() {
    }

    /** A new id such as {@code web-3:4821:9f2c1a7e}. */
    public static String generate() {
        byte[] suffix = new byte[4];
        ThreadLocalRandom.current().nextBytes(suffix);
        return host() + ":" + ProcessHandle.current().pid() + ":" + HexFormat.of().formatHex(suffix);
    }

    private static String host() {
        String fromEnvironment = System.getenv("HOSTNAME");
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            return fromEnvironment;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown-host";
        }
    }
}

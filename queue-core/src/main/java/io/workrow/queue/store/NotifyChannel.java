package io.workrow.queue.store;

/**
 * The LISTEN/NOTIFY channel of one Workrow schema: {@code workrow:<schema>}, so that two schemas
 * in one database never wake each other's workers. The insert trigger (migration V3) builds the
 * same name from {@code TG_TABLE_SCHEMA}; every other statement gets it from here.
 */
public final class NotifyChannel {

    private static final String PREFIX = "workrow:";
    /** PostgreSQL's limit on a channel name, in bytes. */
    private static final int MAX_BYTES = 63;

    private NotifyChannel() {
    }

    /** The channel of {@code schema}; throws when the schema's name is too long to make one. */
    public static String of(SqlIdentifier schema) {
        String channel = PREFIX + schema.name();
        if (channel.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException("schema '" + schema.name() + "' is too long for Workrow's"
                    + " notification channel '" + PREFIX + "<schema>': at most " + (MAX_BYTES - PREFIX.length())
                    + " bytes");
        }
        return channel;
    }

    /** The job id a cancellation payload names, or -1 when the payload is a queue name. */
    public static long cancelledJob(String payload) {
        if (payload == null || !payload.startsWith("cancel:")) {
            return -1;
        }
        try {
            return Long.parseLong(payload.substring("cancel:".length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}

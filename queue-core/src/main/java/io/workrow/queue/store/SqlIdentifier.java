package io.workrow.queue.store;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * A SQL identifier taken from configuration (a schema name), checked before it can reach any
 * statement. Only plain lowercase identifiers are accepted, and they are always emitted quoted,
 * so no configuration value can change the meaning of a statement.
 */
public final class SqlIdentifier {

    private static final Pattern PLAIN = Pattern.compile("^[a-z_][a-z0-9_]*$");

    /** PostgreSQL truncates identifiers longer than this many bytes (NAMEDATALEN - 1). */
    private static final int MAX_BYTES = 63;

    private final String name;

    private SqlIdentifier(String name) {
        this.name = name;
    }

    /**
     * Checks {@code name} and wraps it.
     *
     * @param what names the setting in the error message, e.g. {@code workrow.schema}
     * @throws IllegalArgumentException naming the setting, the value and the rule
     */
    public static SqlIdentifier of(String what, String name) {
        if (name == null || !PLAIN.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " must be a plain SQL identifier matching "
                    + PLAIN.pattern() + ", was '" + name + "'");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException(what + " must be at most " + MAX_BYTES
                    + " bytes long, was '" + name + "'");
        }
        return new SqlIdentifier(name);
    }

    /** The bare name, as stored in the catalog. */
    public String name() {
        return name;
    }

    /** The name quoted for use in SQL text. */
    public String quoted() {
        return '"' + name + '"';
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof SqlIdentifier that && name.equals(that.name);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return name;
    }
}

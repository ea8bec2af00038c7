package io.workrow.queue.client;

import java.util.regex.Pattern;

/**
 * The rule for queue names: lowercase letters, digits, {@code -} and {@code _}, starting with a
 * letter, at most 64 characters. Queue names are always bind parameters; the rule keeps them
 * readable in logs, metrics tags and property keys.
 */
public final class QueueNames {

    private static final Pattern VALID = Pattern.compile("^[a-z][a-z0-9_-]{0,63}$");

    private QueueNames() {
    }

    /** Returns {@code queue} if it follows the rule; otherwise throws, naming it. */
    public static String check(String queue) {
        if (queue == null || !VALID.matcher(queue).matches()) {
            throw new IllegalArgumentException("Queue name '" + queue + "' is invalid: use lowercase letters,"
                    + " digits, '-' and '_', starting with a letter, at most 64 characters");
        }
        return queue;
    }
}

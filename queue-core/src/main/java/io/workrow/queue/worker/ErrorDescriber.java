package io.workrow.queue.worker;

/**
 * Turns a handler's exception into the text stored in {@code last_error}. Replace it to redact
 * secrets or personal data that exception messages may carry; the default keeps the exception
 * class and its message, truncated.
 */
@FunctionalInterface
public interface ErrorDescriber {

    /** Longest {@code last_error} the default describer writes. */
    int DEFAULT_MAX_LENGTH = 2000;

    String describe(Throwable error);

    /** {@code ExceptionClass: message}, cut to {@code maxLength} characters. */
    static ErrorDescriber classAndMessage(int maxLength) {
        return error -> {
            String message = error.getMessage();
            String text = message == null ? error.getClass().getName() : error.getClass().getName() + ": " + message;
            return text.length() <= maxLength ? text : text.substring(0, maxLength - 1) + "…";
        };
    }
}

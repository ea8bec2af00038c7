package io.workrow.queue.worker;

import java.time.Duration;

/** Shared checks for worker settings; messages name the setting, the value and the rule. */
final class Settings {

    private Settings() {
    }

    static Duration requirePositive(String name, Duration value) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
        return value;
    }

    static Duration requireNotNegative(String name, Duration value) {
        if (value == null || value.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
        return value;
    }

    static int requireAtLeast(String name, int min, int value) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be at least " + min + ", was " + value);
        }
        return value;
    }
}

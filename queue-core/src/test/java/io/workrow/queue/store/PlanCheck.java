package io.workrow.queue.store;

import java.util.Set;

/**
 * How a plan test runs one statement and what its plan must show.
 *
 * @param types the parameter types to prepare it with
 * @param arguments the values to run it with, as SQL literals
 * @param indexes the plan must use one of these, or all of them when {@code all}
 */
record PlanCheck(String types, String arguments, Set<String> indexes, boolean all) {

    PlanCheck(String types, String arguments, Set<String> indexes) {
        this(types, arguments, indexes, false);
    }
}

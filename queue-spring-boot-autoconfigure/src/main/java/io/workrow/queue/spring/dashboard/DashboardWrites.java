package io.workrow.queue.spring.dashboard;

import org.jspecify.annotations.Nullable;

/**
 * Whether the page offers writes, and where it sends them: the {@code workrow} actuator
 * endpoint, whose access rules and security decide for every write whatever the page shows.
 *
 * @param endpointPath the endpoint's path under the servlet (such as {@code /actuator/workrow}), or
 *     null when the page offers no writes
 * @param reason why the page offers no writes, or null when it does
 */
public record DashboardWrites(@Nullable String endpointPath, @Nullable String reason) {

    /** Writes sent to the endpoint at this path. */
    public static DashboardWrites through(String endpointPath) {
        return new DashboardWrites(endpointPath, null);
    }

    /** No writes, for this reason. */
    public static DashboardWrites readOnly(String reason) {
        return new DashboardWrites(null, reason);
    }

    public boolean allowed() {
        return endpointPath != null;
    }
}

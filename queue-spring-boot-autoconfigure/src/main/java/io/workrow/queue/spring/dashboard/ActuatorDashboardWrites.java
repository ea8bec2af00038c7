package io.workrow.queue.spring.dashboard;

import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.core.env.Environment;

/**
 * Decides the page's writes from the {@code workrow} endpoint as the actuator serves it: offered
 * when the endpoint's access is unrestricted, it is exposed over HTTP and it shares the page's
 * port (the page's requests carry the page's session and CSRF token only to its own origin).
 */
public final class ActuatorDashboardWrites implements Supplier<DashboardWrites> {

    private static final EndpointId WORKROW = EndpointId.of("workrow");

    private final ObjectProvider<EndpointAccessResolver> access;
    private final ObjectProvider<PathMappedEndpoints> endpoints;
    private final Environment environment;

    public ActuatorDashboardWrites(ObjectProvider<EndpointAccessResolver> access,
            ObjectProvider<PathMappedEndpoints> endpoints, Environment environment) {
        this.access = access;
        this.endpoints = endpoints;
        this.environment = environment;
    }

    @Override
    public DashboardWrites get() {
        EndpointAccessResolver resolver = access.getIfAvailable();
        Access granted = resolver == null ? Access.READ_ONLY : resolver.accessFor(WORKROW, Access.READ_ONLY);
        if (granted != Access.UNRESTRICTED) {
            return DashboardWrites.readOnly("Read-only: the workrow endpoint's access is " + label(granted)
                    + "; management.endpoint.workrow.access=unrestricted allows retry, cancel, pause and resume.");
        }
        if (ManagementPortType.get(environment) != ManagementPortType.SAME) {
            return DashboardWrites.readOnly(
                    "Read-only: the actuator runs on another port (management.server.port), which this page does not write to.");
        }
        PathMappedEndpoints mapped = endpoints.getIfAvailable();
        String path = mapped == null ? null : mapped.getPath(WORKROW);
        if (path == null) {
            return DashboardWrites.readOnly("Read-only: the workrow endpoint is not exposed over HTTP; add it to "
                    + "management.endpoints.web.exposure.include.");
        }
        return DashboardWrites.through(path);
    }

    private static String label(Access access) {
        return access.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}

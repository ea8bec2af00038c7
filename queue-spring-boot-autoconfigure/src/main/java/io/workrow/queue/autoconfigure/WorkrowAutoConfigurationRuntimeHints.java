package io.workrow.queue.autoconfigure;

import java.util.List;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;

/**
 * What the starter reaches at run time that AOT processing cannot see in its code: the dashboard's
 * page, script and style (read from the jar), the {@code workrow.*} properties' types (bound
 * reflectively; Spring Boot registers them too when it finds the bean, this holds without it), and
 * the {@code getDataSource()} of JPA's transaction manager, read to check that a transactional
 * handler's manager commits on Workrow's DataSource.
 */
public final class WorkrowAutoConfigurationRuntimeHints implements RuntimeHintsRegistrar {

    /** The dashboard's files, beside {@code DashboardPage} in the jar. */
    static final List<String> DASHBOARD_ASSETS = List.of("dashboard.html", "dashboard.css", "dashboard.js");

    /** Where the dashboard's files are. */
    static final String DASHBOARD_DIRECTORY = "io/workrow/queue/spring/dashboard";

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        for (String asset : DASHBOARD_ASSETS) {
            hints.resources().registerPattern(DASHBOARD_DIRECTORY + "/" + asset);
        }
        BindableRuntimeHintsRegistrar.forTypes(WorkrowProperties.class).registerHints(hints, classLoader);
        hints.reflection().registerTypeIfPresent(classLoader, "org.springframework.orm.jpa.JpaTransactionManager",
                type -> type.withMethod("getDataSource", List.of(), ExecutableMode.INVOKE));
    }
}

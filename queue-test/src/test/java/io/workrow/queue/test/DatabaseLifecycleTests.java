package io.workrow.queue.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.test.database.PostgresServer;
import io.workrow.queue.test.database.TestDatabase;
import io.workrow.queue.test.app.Greeter;
import io.workrow.queue.test.app.GreetingApplication;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** The database a {@link WorkrowTest} context gets lives exactly as long as the context. */
class DatabaseLifecycleTests {

    @Test
    void theContextsDatabaseIsCreatedForItAndDroppedWhenItClosesEvenAfterADrain() throws SQLException {
        WorkrowTestContextCustomizer customizer = new WorkrowTestContextCustomizer(DatabaseLifecycleTests.class, false);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(GreetingApplication.class)
                .web(WebApplicationType.NONE)
                .initializers(application -> customizer.customizeContext(application, null))
                .run();
        String name;
        try {
            name = context.getBean(JdbcTemplate.class).queryForObject("SELECT current_database()", String.class);
            assertThat(name).startsWith("workrow_test_databaselifecycletests_");
            assertThat(exists(name)).isTrue();
            context.getBean(Greeter.class).greetLater("ada", Duration.ZERO);
            assertThat(context.getBean(WorkrowTester.class).drain("greet")).hasSize(1);
        } finally {
            context.close();
        }

        assertThat(exists(name)).as("dropped with the context").isFalse();
    }

    @Test
    void twoClassesGetTwoDatabases() {
        TestDatabase first = TestDatabase.createFor(DatabaseLifecycleTests.class);
        TestDatabase second = TestDatabase.createFor(DatabaseLifecycleTests.class);
        try {
            assertThat(first.name()).isNotEqualTo(second.name());
            assertThat(first.jdbcUrl()).contains("/" + first.name());
        } finally {
            first.drop();
            second.drop();
        }
    }

    private static boolean exists(String database) throws SQLException {
        PostgresServer server = PostgresServer.get();
        try (Connection connection = DriverManager.getConnection(server.adminUrl(), server.user(), server.password());
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ?)")) {
            statement.setString(1, database);
            try (ResultSet row = statement.executeQuery()) {
                row.next();
                return row.getBoolean(1);
            }
        }
    }
}

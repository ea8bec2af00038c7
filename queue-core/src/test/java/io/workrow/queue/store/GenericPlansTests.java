package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A claim runs under the generic plan, and the setting ends with its transaction: the pool's
 * connection goes back as it came, after a claim that failed too, and a caller's own transaction
 * is left as it is.
 */
class GenericPlansTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    private static final String MODE = "SELECT current_setting('plan_cache_mode')";

    @Test
    void theStatementRunsWithTheGenericPlanAndTheConnectionGoesBackAsItCame() throws Exception {
        try (Connection only = database.dataSource().getConnection()) {
            SingleConnectionDataSource one = new SingleConnectionDataSource(only, true);
            JdbcTemplate jdbc = new JdbcTemplate(one);
            GenericPlans plans = new GenericPlans(one, jdbc);

            assertThat(plans.run(() -> jdbc.queryForObject(MODE, String.class))).isEqualTo("force_generic_plan");
            assertThat(jdbc.queryForObject(MODE, String.class)).isEqualTo("auto");
            assertThat(only.getAutoCommit()).isTrue();

            assertThatThrownBy(() -> plans.run(() -> jdbc.queryForObject("SELECT 1 / 0", Integer.class)))
                    .hasMessageContaining("division by zero");
            assertThat(jdbc.queryForObject(MODE, String.class)).as("after a failed statement").isEqualTo("auto");

            String inCallersTransaction = new TransactionTemplate(new DataSourceTransactionManager(one))
                    .execute(status -> plans.run(() -> jdbc.queryForObject(MODE, String.class)));
            assertThat(inCallersTransaction).as("a caller's transaction is not changed").isEqualTo("auto");
        }
    }

    @Test
    void aClaimLeavesItsConnectionAsItFoundIt() throws Exception {
        database.writeOnceStore().insertMany(List.of(new NewJob("generic", null, 0, 0, null, "{}", "{}", null, 0, 3)));
        try (Connection only = database.dataSource().getConnection()) {
            SingleConnectionDataSource one = new SingleConnectionDataSource(only, true);
            WriteOnceStore store = new WriteOnceStore(one, database.schema());
            assertThat(store.claim("generic", "w", 10, Duration.ofMinutes(1), false)).hasSize(1);
            assertThat(new JdbcTemplate(one).queryForObject(MODE, String.class)).isEqualTo("auto");
            assertThat(only.getAutoCommit()).isTrue();
        }
    }
}

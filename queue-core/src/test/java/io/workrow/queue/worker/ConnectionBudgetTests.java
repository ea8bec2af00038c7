package io.workrow.queue.worker;

import io.workrow.queue.worker.connection.ConnectionBudget;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

class ConnectionBudgetTests {

    @Test
    void countsEveryConnectionARuntimeMayHoldAtOnce() {
        // listener 1, two pollers, writer, keeper, promoter, maintenance, and 8 transactional handlers
        assertThat(new ConnectionBudget(null, true, 2, 8, false, false).needed()).isEqualTo(19);
        assertThat(new ConnectionBudget(null, true, 2, 8, true, false).needed()).isEqualTo(20);
        assertThat(new ConnectionBudget(null, false, 1, 0, false, false).needed()).isEqualTo(9);
        assertThat(new ConnectionBudget(null, false, 1, 0, false, true).needed()).isEqualTo(10);
    }

    @Test
    void readsThePoolsMaximumSize() {
        try (HikariDataSource hikari = new HikariDataSource()) {
            hikari.setMaximumPoolSize(7);
            assertThat(ConnectionBudget.maximumPoolSize(hikari)).isEqualTo(7);
        }
        assertThat(ConnectionBudget.maximumPoolSize(new org.springframework.jdbc.datasource.SimpleDriverDataSource()))
                .isNull();
    }
}

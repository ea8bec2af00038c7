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
    void sparesWhatThePoolHasBeyondTheBudgetForSecondClaims() {
        try (HikariDataSource hikari = new HikariDataSource()) {
            hikari.setMaximumPoolSize(12);
            // listener, one poller's claims, writer, keeper, handlers' writes, promoter, four maintenance tasks
            assertThat(new ConnectionBudget(hikari, true, 1, 0, false, false).spare()).isEqualTo(2);
            hikari.setMaximumPoolSize(10);
            assertThat(new ConnectionBudget(hikari, true, 1, 0, false, false).spare()).isZero();
            hikari.setMaximumPoolSize(8);
            assertThat(new ConnectionBudget(hikari, true, 1, 0, false, false).spare()).as("short, not negative").isZero();
        }
        assertThat(new ConnectionBudget(new org.springframework.jdbc.datasource.SimpleDriverDataSource(), true, 1, 0,
                false, false).spare()).as("a DataSource that does not say its size").isEqualTo(Integer.MAX_VALUE);
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

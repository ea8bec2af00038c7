package io.workrow.queue.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Function;
import org.springframework.jdbc.core.PreparedStatementCreator;

/**
 * Binds a batch as parallel SQL arrays, one per column, in parameter order: the form every
 * many-row statement of this package takes, so a batch is one round trip and one plan.
 */
final class ArrayParameters {

    private ArrayParameters() {
    }

    /** {@code sql} with each column bound, in order, from parameter 1. */
    static PreparedStatementCreator arrays(String sql, Column... columns) {
        return connection -> {
            PreparedStatement statement = connection.prepareStatement(sql);
            for (int i = 0; i < columns.length; i++) {
                statement.setArray(i + 1, columns[i].create(connection));
            }
            return statement;
        };
    }

    /** One array of {@code sqlType} holding {@code value} of each row. */
    static <T> Column column(List<T> rows, String sqlType, Function<T, ?> value) {
        Object[] values = new Object[rows.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = value.apply(rows.get(i));
        }
        return connection -> connection.createArrayOf(sqlType, values);
    }

    /** A batch of jobs to enqueue as the thirteen arrays the enqueue statements take, in order. */
    static Column[] newJobs(List<NewJob> jobs) {
        return new Column[] {
                column(jobs, "text", NewJob::queue),
                column(jobs, "text", NewJob::partitionKey),
                column(jobs, "int4", NewJob::partitionBucket),
                column(jobs, "int4", NewJob::priority),
                column(jobs, "text", NewJob::idempotencyKey),
                column(jobs, "text", NewJob::payloadJson),
                column(jobs, "text", NewJob::headersJson),
                column(jobs, "text", job -> job.runAt() == null ? null : job.runAt().toString()),
                column(jobs, "int8", NewJob::delayMillis),
                column(jobs, "int4", NewJob::maxAttempts),
                column(jobs, "text", NewJob::fairnessKey),
                column(jobs, "text", job -> job.expiresAt() == null ? null : job.expiresAt().toString()),
                column(jobs, "int8", NewJob::timeoutMillis)};
    }

    /** An array parameter, created on the statement's connection. */
    @FunctionalInterface
    interface Column {
        java.sql.Array create(Connection connection) throws SQLException;
    }
}

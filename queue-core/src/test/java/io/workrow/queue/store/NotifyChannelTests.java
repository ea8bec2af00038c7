package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.workrow.queue.migration.WorkrowMigrations;
import io.workrow.queue.testing.WorkrowTestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

class NotifyChannelTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    @Test
    void twoSchemasInOneDatabaseNotifyOnChannelsOfTheirOwn() throws Exception {
        SqlIdentifier other = SqlIdentifier.of("schema", "tenant_b");
        new WorkrowMigrations(database.dataSource(), other).migrate();
        JobStore publicStore = database.store();
        JobStore otherStore = JobStore.of(database.dataSource(), other);
        assertThat(publicStore.notifyChannel()).isEqualTo("workrow:public");

        try (Connection listening = database.dataSource().getConnection()) {
            listening.setAutoCommit(true);
            try (Statement statement = listening.createStatement()) {
                statement.execute("LISTEN \"" + publicStore.notifyChannel() + "\"");
            }
            otherStore.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}", null, 0, 3)));
            assertThat(received(listening)).as("another schema's insert").isEmpty();

            publicStore.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}", null, 0, 3)));
            assertThat(received(listening)).containsExactly("mail");

            long running = publicStore.insertMany(List.of(new NewJob("mail", null, 0, 0, null, "{}", "{}", null, 0, 3)))
                    .get(0);
            received(listening);
            publicStore.claims().claim("mail", "w", 10, java.time.Duration.ofMinutes(1), false);
            assertThat(publicStore.cancel("mail", running)).isTrue();
            assertThat(received(listening)).containsExactly("cancel:" + running);
            assertThat(NotifyChannel.cancelledJob("cancel:" + running)).isEqualTo(running);
            assertThat(NotifyChannel.cancelledJob("mail")).isEqualTo(-1);
        }
    }

    @Test
    void aSchemaNameTooLongForAChannelIsRefusedClearly() {
        SqlIdentifier longest = SqlIdentifier.of("schema", "s".repeat(60));
        assertThatIllegalArgumentException().isThrownBy(() -> NotifyChannel.of(longest))
                .withMessageContaining("at most 55 bytes");
    }

    private static List<String> received(Connection connection) throws Exception {
        PGNotification[] notifications = connection.unwrap(PGConnection.class).getNotifications(500);
        List<String> payloads = new ArrayList<>();
        if (notifications != null) {
            for (PGNotification notification : notifications) {
                payloads.add(notification.getParameter());
            }
        }
        return payloads;
    }
}

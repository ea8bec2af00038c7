package io.workrow.queue.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.workrow.queue.testing.WorkrowTestDatabase;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The partition keeper on the write-once layout: a missing day ahead is created, and only once. */
class PartitionKeeperTests {

    @RegisterExtension
    static final WorkrowTestDatabase database = new WorkrowTestDatabase();

    @Test
    void aDayAheadThatIsMissingIsCreatedAndNothingElse() {
        PartitionKeeper keeper = new PartitionKeeper(database.writeOnceStore());
        keeper.runOnce();
        String inThreeDays = "workrow_outcome_"
                + LocalDate.now(ZoneOffset.UTC).plusDays(3).format(DateTimeFormatter.BASIC_ISO_DATE);
        database.jdbc().execute("DROP TABLE " + inThreeDays);

        assertThat(keeper.runOnce()).isEqualTo(1);

        assertThat(days()).contains(inThreeDays).hasSize(8);
        assertThat(keeper.runOnce()).as("nothing left to create").isZero();
    }

    private List<String> days() {
        return database.jdbc().queryForList("""
                SELECT child.relname FROM pg_inherits
                JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid
                WHERE pg_inherits.inhparent = 'workrow_outcome'::regclass
                  AND child.relname ~ '^workrow_outcome_[0-9]{8}$'
                  AND to_date(substr(child.relname, 17), 'YYYYMMDD') >= (now() AT TIME ZONE 'UTC')::date
                """, String.class);
    }
}

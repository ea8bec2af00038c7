package io.workrow.queue.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SqlIdentifierTests {

    @Test
    void plainIdentifierIsQuoted() {
        assertThat(SqlIdentifier.of("workrow.schema", "jobs_2").quoted()).isEqualTo("\"jobs_2\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"public; drop table x", "Public", "1abc", "a-b", "a\"b", "", "sch ema"})
    void anythingButAPlainIdentifierIsRejectedNamingTheSetting(String name) {
        assertThatIllegalArgumentException().isThrownBy(() -> SqlIdentifier.of("workrow.schema", name))
                .withMessageContaining("workrow.schema")
                .withMessageContaining("'" + name + "'");
    }

    @Test
    void longerThanPostgresKeepsIsRejected() {
        assertThatIllegalArgumentException().isThrownBy(() -> SqlIdentifier.of("workrow.schema", "a".repeat(64)))
                .withMessageContaining("at most 63 bytes");
    }
}

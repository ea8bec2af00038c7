package io.workrow.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.data.jdbc.core.dialect.JdbcDialect;
import org.springframework.data.jdbc.core.dialect.JdbcPostgresDialect;

/** A small shop: orders are saved with a receipt job in the same transaction; Workrow sends the receipts. */
@SpringBootApplication
public class SampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }

    /**
     * Spring Data JDBC's SQL dialect, named rather than asked of the database: ahead-of-time
     * processing ({@code spring-boot:process-aot}, a native image) has no database to ask.
     */
    @Bean
    JdbcDialect jdbcDialect() {
        return JdbcPostgresDialect.INSTANCE;
    }
}

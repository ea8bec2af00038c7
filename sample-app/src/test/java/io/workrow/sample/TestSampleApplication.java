package io.workrow.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Runs the sample shop against a PostgreSQL started by Testcontainers, for people with Docker:
 * {@code ./mvnw -pl sample-app -am spring-boot:test-run}.
 */
public class TestSampleApplication {

    public static void main(String[] args) {
        SpringApplication.from(SampleApplication::main).with(Containers.class).run(args);
    }

    @TestConfiguration(proxyBeanMethods = false)
    static class Containers {

        @Bean
        @ServiceConnection
        PostgreSQLContainer postgres() {
            return new PostgreSQLContainer("postgres:15-alpine");
        }
    }
}

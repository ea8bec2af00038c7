package io.workrow.queue.process;

import io.workrow.queue.JobContext;
import io.workrow.queue.QueueHandler;
import javax.sql.DataSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A worker-only service, the shape users deploy beside their web tier: no web server, only
 * {@code @QueueHandler} beans. {@link WorkerProcessTests} runs it as a JVM process of its own.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class WorkerOnlyApplication {

    /** How long to work, in milliseconds; each run is recorded in {@code process_runs}. */
    public record Work(long millis) {
    }

    public static void main(String[] args) {
        SpringApplication application = new SpringApplication(WorkerOnlyApplication.class);
        application.setWebApplicationType(org.springframework.boot.WebApplicationType.NONE);
        application.run(args);
    }

    @Bean
    Worker worker(DataSource dataSource) {
        return new Worker(new JdbcTemplate(dataSource));
    }

    static class Worker {

        private final JdbcTemplate jdbc;

        Worker(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @QueueHandler("process-work")
        void work(Work work, JobContext job) throws InterruptedException {
            jdbc.update("INSERT INTO process_runs (job_id, worker) VALUES (?, ?)", job.id(),
                    ProcessHandle.current().pid());
            Thread.sleep(work.millis());
        }

        /** A job that kills its worker: the JVM halts mid-run, as on an out-of-memory kill. */
        @QueueHandler("process-crash")
        void crash(Work work, JobContext job) {
            jdbc.update("INSERT INTO process_runs (job_id, worker) VALUES (?, ?)", job.id(),
                    ProcessHandle.current().pid());
            Runtime.getRuntime().halt(137);
        }
    }
}

package io.workrow.queue.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.workrow.queue.spring.lifecycle.WorkerRuntimeLifecycle;
import io.workrow.queue.test.app.Greeter;
import io.workrow.queue.test.app.GreetingApplication;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

@WorkrowTest(startWorkers = true)
@SpringBootTest(classes = GreetingApplication.class)
class StartedWorkersTests {

    @Autowired
    WorkrowTester workrow;

    @Autowired
    Greeter greeter;

    @Autowired
    WorkerRuntimeLifecycle workers;

    @Test
    void theWorkersRunJobsInTheBackgroundAndDrainSaysItCannot() {
        assertThat(workers.isRunning()).isTrue();

        greeter.greetLater("grace", Duration.ZERO);

        await().atMost(Duration.ofSeconds(10)).until(() -> greeter.greeted("grace"));
        assertThat(greeter.handlerThreads()).singleElement().asString().startsWith("workrow-greet-");
        assertThatThrownBy(() -> workrow.drain("greet")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("workrow.auto-startup=false");
    }
}
